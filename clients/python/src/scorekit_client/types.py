"""The service's types under the names the client uses. They all come from _openapi.py,
which gen_types.py generates from openapi.json; nothing here is written by hand
but the names (as the TypeScript client's types.ts)."""

from __future__ import annotations

from typing import Any, Dict

from ._openapi import (Adjustment, AgentsPage, AuditEntry, CreateEvaluationInputBody, Deleted, ErrorDetail, EvaluationView,
                       Evidence, GetAgreementQuery, ImportedRun, ImportResult, Insight, InsightsPage, JudgeEndpoint,
                       JudgeRoute, Label, LabelImportResult, LabelInput, LabelsPage, ListInsightsQuery, ListLabelsQuery,
                       Manifest, PolicyBody, Problem, PromoteInputBody, PromotionGate, PublishedVersion, PublishInputBody,
                       Result, ResultView, Run, RunsPage, RunView, ScoreInputBody, ScoreLabelledResult, ScorerAgreement,
                       ScorerInfo, ScorerSummary, Telemetry, VersionDisagreement)

#: The body of POST /v1/score.
ScoreRequest = ScoreInputBody
#: The body of POST /v1/agents/{agent}/evaluations.
EvaluationRequest = CreateEvaluationInputBody
#: An evaluation: status, progress, per-scorer summary and, when asked, the results.
Evaluation = EvaluationView
#: One stored result of an evaluation, with the earlier scorer version's beside it.
EvaluationResult = ResultView
#: The body of POST /v1/scorers: a configured scorer (base, config) or a WASM one (module, manifest).
PublishRequest = PublishInputBody
#: The body of a promotion: override says why a version the agreement gate refuses goes through anyway.
PromoteOptions = PromoteInputBody
#: What a published WASM module runs under.
ScorerManifest = Manifest
#: An agent's on-arrival policy.
Policy = PolicyBody
#: One field-level error inside a problem document.
ProblemDetail = ErrorDetail
#: The query of GET /v1/insights and GET /v1/agents/{agent}/insights.
InsightQuery = ListInsightsQuery
#: The query of GET /v1/scorers/{scorer}/agreement.
AgreementQuery = GetAgreementQuery
#: The query of GET /v1/labels.
LabelQuery = ListLabelsQuery
#: One line of an export (GET /v1/export): kind and data.
ExportLine = Dict[str, Any]

__all__ = [
    "Adjustment", "AgentsPage", "AgreementQuery", "AuditEntry", "Deleted", "Evaluation", "EvaluationRequest",
    "EvaluationResult", "Evidence", "ExportLine", "ImportedRun", "ImportResult", "Insight", "InsightQuery", "InsightsPage",
    "JudgeEndpoint", "JudgeRoute", "Label", "LabelImportResult", "LabelInput", "LabelQuery", "LabelsPage", "Policy",
    "Problem", "ProblemDetail", "PromoteOptions", "PromotionGate", "PublishedVersion", "PublishRequest", "Result",
    "Run", "RunsPage", "RunView", "ScoreLabelledResult", "ScoreRequest", "ScorerAgreement", "ScorerInfo",
    "ScorerManifest", "ScorerSummary", "Telemetry", "VersionDisagreement",
]
