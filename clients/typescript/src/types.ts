// The service's types under their own names. They all come from src/openapi.ts, which
// openapi-typescript generates from service/api/openapi.json (npm run generate); nothing
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
/** An agent's on-arrival policy. */
export type Policy = Schemas["PolicyBody"];
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

/** What a deletion removed (DELETE /v1/runs/{id}, /v1/agents/{agent}, /v1/tenant). */
export type Deleted = Schemas["Deleted"];
/** One record of the tenant's audit log: who deleted or exported what, and when. */
export type AuditEntry = Schemas["AuditEntry"];
