// The service's types under their own names. They all come from src/openapi.ts, which
// openapi-typescript generates from openapi.json (npm run generate); nothing
// here is written by hand but the names.
import type { components, operations, paths } from "./openapi.js";

type Schemas = components["schemas"];

export type { components, operations, paths };

/** One thing an agent did: the unit a scorer grades (the run contract, schemas/run.schema.json). */
export type Run = Schemas["Run"];
/** A scorer's result: `status` is `scored`, `skipped` or `failed`; only `scored` carries a score. */
export type Result = Schemas["Result"];
/** The body of POST /v1/score. */
export type ScoreRequest = Schemas["ScoreInputBody"];
/** What POST /v1/runs stored, found again, and rejected (with the line and the reason). */
export type ImportResult = Schemas["ImportResult"];
/** One run of an import: its line, id, status and, when rejected, the reason. */
export type ImportedRun = Schemas["ImportedRun"];
/** The body of POST /v1/agents/{agent}/evaluations. */
export type EvaluationRequest = Schemas["CreateEvaluationInputBody"];
/** An evaluation: status, progress, per-scorer summary and, when asked, the results. */
export type Evaluation = Schemas["EvaluationView"];
/** One stored result of an evaluation, with the earlier scorer version's beside it. */
export type EvaluationResult = Schemas["ResultView"];
/** A run on which versions of one scorer, evaluated side by side, gave different verdicts. */
export type VersionDisagreement = Schemas["VersionDisagreement"];
/** Per scorer: scored, skipped, failed, pending, mean and pass rate (over scored results only). */
export type ScorerSummary = Schemas["ScorerSummary"];
/** A stored run with every result it ever had. */
export type RunView = Schemas["RunView"];
/** A page of an agent's runs, newest first. */
export type RunsPage = Schemas["RunsPage"];
/** A page of the tenant's agents. */
export type AgentsPage = Schemas["AgentsPage"];
/** What a scorer declares about itself, and the runtime it runs in. */
export type ScorerInfo = Schemas["ScorerInfo"];
/** The body of POST /v1/scorers: a configured scorer (`base`, `config`) or a WASM one (`module` as base64, `manifest`). */
export type PublishRequest = Schemas["PublishInputBody"];
/** One immutable version of a tenant's published scorer; `ref` (`name@N`) names it in evaluations and policies. */
export type PublishedVersion = Schemas["PublishedVersion"];
/** What the tenant's agreement gate said of a promotion: both versions' agreement with the labels, the decision, any override. */
export type PromotionGate = Schemas["PromotionGate"];
/** The body of a promotion: `override` says why a version the agreement gate refuses goes through anyway (recorded). */
export type PromoteOptions = Schemas["PromoteInputBody"];
/** What a published WASM module runs under: the scorer it carries and its limits. */
export type ScorerManifest = Schemas["Manifest"];
/** An agent's on-arrival policy. */
export type Policy = Schemas["PolicyBody"];
/** A tenant's choice of judge: an endpoint the operator allows and a model there. */
export type JudgeRoute = Schemas["JudgeRoute"];
/** A judge endpoint the operator allows, its models, and whether the tenant stored its own key there (never the key). */
export type JudgeEndpoint = Schemas["JudgeEndpoint"];
/** An RFC 9457 problem document with the service's stable `code`. */
export type Problem = Schemas["Problem"];
/** One field-level error inside a problem document. */
export type ProblemDetail = Schemas["ErrorDetail"];
/** An insight about one (agent, scorer): its kind, severity, title and evidence. */
export type Insight = Schemas["Insight"];
/** A page of insights, most severe first; `next` is the cursor of the next page. */
export type InsightsPage = Schemas["InsightsPage"];
/** What an insight rests on: the counts of its window, the measure, causes, worst runs. */
export type Evidence = Schemas["Evidence"];
/** The query of GET /v1/insights and GET /v1/agents/{agent}/insights. */
export type InsightQuery = NonNullable<operations["list-insights"]["parameters"]["query"]>;
/** A person's judgement of a run for a scorer or criterion, as given: the labeller and one of passed, score or choice. */
export type LabelInput = Schemas["LabelInput"];
/** A stored label: the run, the scorer (or criterion), the labeller, the verdict and note. */
export type Label = Schemas["Label"];
/** A page of the tenant's labels, in the order they were given; `next` is the cursor of the next page. */
export type LabelsPage = Schemas["LabelsPage"];
/** What POST /v1/labels stored, replaced and rejected (with the line number and the reason). */
export type LabelImportResult = Schemas["LabelImportResult"];
/** One line of a label import: a label with the run and the scorer it is for. */
export type LabelLine = LabelInput & { run_id: string; scorer: string };
/** How well a scorer version agrees with the tenant's labels, with intervals, disagreements and the labellers' own agreement. */
export type ScorerAgreement = Schemas["ScorerAgreement"];
/** The query of GET /v1/scorers/{scorer}/agreement. */
export type AgreementQuery = NonNullable<operations["get-agreement"]["parameters"]["query"]>;
/** The query of GET /v1/labels. */
export type LabelQuery = NonNullable<operations["list-labels"]["parameters"]["query"]>;
/** What POST /v1/scorers/{scorer}/agreement/score started: the version, the runs and the evaluations to follow. */
export type ScoreLabelledResult = Schemas["ScoreLabelledResult"];

/** What a deletion removed (DELETE /v1/runs/{id}, /v1/agents/{agent}, /v1/tenant). */
export type Deleted = Schemas["Deleted"];
/** One record of the tenant's audit log: who deleted or exported what, and when. */
export type AuditEntry = Schemas["AuditEntry"];
