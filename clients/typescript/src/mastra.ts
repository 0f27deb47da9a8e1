// The Mastra adapter: any scorekit scorer where a Mastra scorer was used.
//
// It is a real Mastra scorer (createScorer from @mastra/core/evals), so Mastra runs it the
// way it runs its own: scorer.run(run), runEvals, an Agent's `scorers`. Mastra's run is read
// with @mastra/evals' own helpers, so scorekit sees the same question and answer that
// Mastra's prebuilt scorers (answer relevancy, faithfulness ...) read.
import { createScorer, notScorable } from "@mastra/core/evals";
import type { ScorerRun, ScorerRunInputForAgent, ScorerRunOutputForAgent } from "@mastra/core/evals";
import {
  extractToolResults,
  getAssistantMessageFromRunOutput,
  getCombinedSystemPrompt,
  getConversationHistoryFromRunInput,
  getUserMessageFromRunInput,
  isScorerRunOutputForAgent,
  mergeToolInvocations,
} from "@mastra/evals/scorers/utils";

import type { ScorekitClient } from "./client.js";
import { ScoreFailedError } from "./errors.js";
import type { Result, Run } from "./types.js";

export { ScoreFailedError, scorekitErrorOf } from "./errors.js";

/** A scorekit context passage: a string, or `{id, text}` for outputs that cite ids. */
export type Passage = NonNullable<Run["context"]>[number];

/** Options of {@link createScorekitScorer}. */
export interface ScorekitScorerOptions {
  /** The client of the scorekit service that scores. Required. */
  client: ScorekitClient;
  /** The scorekit scorer: `relevancy`, `prescreen`, `masis` ... (GET /v1/scorers lists them). Required. */
  scorer: string;
  /** The scorer's config for every call (validated by the service against its config schema). Optional. */
  config?: Record<string, unknown>;
  /** The Mastra scorer id. Optional. Default is `scorekit-<scorer>`. */
  id?: string;
  /** The Mastra scorer name. Optional. Default is the id. */
  name?: string;
  /** The Mastra scorer description. Optional. Default names the scorekit scorer. */
  description?: string;
  /** The agent the runs come from, recorded on the scorekit run. Optional. */
  agent?: string;
  /**
   * The retrieved passages, the same for every run, as Mastra's context scorers take
   * `options.context`. Optional; see {@link ScorekitScorerOptions.contextExtractor}.
   */
  context?: Passage[];
  /**
   * Takes the passages from each run, as Mastra's context scorers' `contextExtractor` does.
   * Optional. Default (neither this nor `context`): the results of the tool calls in the
   * output, as Mastra's faithfulness scorer reads them; none means no context, and a
   * scorer that needs context then answers `skipped`, which Mastra records as not scorable.
   */
  contextExtractor?: (input: ScorerRunInputForAgent | undefined, output: ScorerRunOutputForAgent) => Passage[];
  /**
   * Builds the scorekit run from Mastra's run instead of {@link toScorekitRun}, for runs of
   * another shape. Optional.
   */
  mapRun?: (run: ScorerRun<ScorerRunInputForAgent, ScorerRunOutputForAgent>) => Run;
}

/**
 * createScorekitScorer returns a Mastra scorer that scores each run with a scorekit scorer
 * through the service. Use it wherever a Mastra scorer goes:
 *
 * ```ts
 * const relevancy = createScorekitScorer({ client, scorer: "relevancy" });
 * const result = await relevancy.run(run);          // or runEvals({ scorers: [relevancy] ... })
 * ```
 *
 * Steps (as Mastra records them): `preprocess` maps Mastra's run onto a scorekit run
 * ({@link toScorekitRun}); `analyze` calls POST /v1/score and keeps the whole scorekit
 * result; `generateScore` is the result's score (0 to 1); `generateReason` its reason.
 *
 * A result that is not `scored` never becomes a number:
 * - `skipped` (the scorer does not apply: no judge configured, no context to grade) becomes
 *   Mastra's `notScorable(reason)`: the run result has `notScorable` and no `score`, and
 *   Mastra leaves it out of averages, as scorekit does;
 * - `failed` (the scorer tried and could not judge: the judge errored, timed out) throws a
 *   {@link ScoreFailedError} with the result's error `code`; Mastra wraps it in its
 *   ScorerRunError (the cause), and stores no score.
 * A problem the service answers (unknown scorer, bad key, invalid config) throws a
 * ScorekitError the same way. Mastra passes a step's error on as a copy of it:
 * `scorekitErrorOf` finds it in the cause chain.
 */
export function createScorekitScorer(options: ScorekitScorerOptions) {
  const { client, scorer, config } = options;
  if (!client) throw new TypeError("createScorekitScorer: client is required (new ScorekitClient({ baseUrl, apiKey }))");
  if (!scorer) throw new TypeError("createScorekitScorer: scorer is required, e.g. \"relevancy\" (GET /v1/scorers lists them)");
  const id = options.id ?? `scorekit-${scorer}`;
  return createScorer({
    id,
    name: options.name ?? id,
    description: options.description ?? `scorekit's ${scorer} scorer, scored by the scorekit service`,
    type: "agent",
  })
    .preprocess(({ run }) => (options.mapRun ? options.mapRun(run) : toScorekitRun(run, options)))
    .analyze(async ({ results }) => {
      const result = await client.score({ scorer, run: results.preprocessStepResult, ...(config ? { config } : {}) });
      switch (result.status) {
        case "scored":
          if (typeof result.score !== "number") {
            throw new ScoreFailedError(scorer, "bad_response", "the result is scored but carries no score", result);
          }
          return result;
        case "skipped":
          return notScorable(result.reason || `scorekit's ${scorer} does not apply to this run`);
        default:
          throw new ScoreFailedError(scorer, result.error?.code ?? result.status, result.error?.message ?? result.reason ?? "", result);
      }
    })
    .generateScore(({ results }) => (results.analyzeStepResult as Result).score as number)
    .generateReason(({ results }) => (results.analyzeStepResult as Result).reason ?? "");
}

/**
 * toScorekitRun maps Mastra's run onto scorekit's Run, reading it with @mastra/evals'
 * helpers:
 *
 * - `input`: the user's message (`getUserMessageFromRunInput`), the question a scorer grades
 *   the answer against;
 * - `output`: the final assistant message (`getAssistantMessageFromRunOutput`), empty when
 *   there is none (which the pre-screen flags unless the agent called tools);
 * - `tool_calls`: every tool call of the output (`mergeToolInvocations`, so calls that
 *   threw count) with its arguments and result, a thrown call's error as `{"error": ...}`:
 *   a turn that did its job through tools is judged on what it did, not called empty;
 * - `expected`: `groundTruth` (a string as is, anything else as JSON);
 * - `context`: `options.context`, else `options.contextExtractor(input, output)`, else the
 *   output's tool results as JSON (`{"tool", "result"}`);
 * - `metadata.instructions`: the agent's system messages, which scorekit's judges read to
 *   learn what the agent is for; `metadata.conversation`: the remembered conversation;
 * - `id`: Mastra's `runId`; `agent`: `options.agent`.
 */
export function toScorekitRun(
  run: ScorerRun<unknown, unknown>,
  options: Pick<ScorekitScorerOptions, "agent" | "context" | "contextExtractor"> = {},
): Run {
  const out: Run = {
    input: getUserMessageFromRunInput(run.input) ?? "",
    output: getAssistantMessageFromRunOutput(run.output) ?? "",
  };
  const calls = toolCallsOf(run);
  if (calls.length > 0) out.tool_calls = calls;
  if (run.runId) out.id = run.runId;
  if (options.agent) out.agent = options.agent;
  const expected = groundTruthText(run.groundTruth);
  if (expected !== undefined) out.expected = expected;
  const context = contextOf(run, options);
  if (context.length > 0) out.context = context;
  const metadata: Record<string, unknown> = {};
  const instructions = getCombinedSystemPrompt(run.input);
  if (instructions) metadata.instructions = instructions;
  const conversation = getConversationHistoryFromRunInput(run.input);
  if (conversation) metadata.conversation = conversation;
  if (Object.keys(metadata).length > 0) out.metadata = metadata;
  return out;
}

function toolCallsOf(run: ScorerRun<unknown, unknown>): NonNullable<Run["tool_calls"]> {
  if (!isScorerRunOutputForAgent(run.output)) return [];
  const calls: NonNullable<Run["tool_calls"]> = [];
  for (const message of run.output) {
    for (const inv of mergeToolInvocations(message)) {
      const call: NonNullable<Run["tool_calls"]>[number] = { id: inv.toolCallId, name: inv.toolName };
      if (inv.args !== undefined) call.arguments = inv.args;
      if (inv.state === "output-error" || inv.isError) {
        call.result = { error: inv.errorText ?? inv.result ?? "the tool failed" };
      } else if (inv.state === "result" && inv.result !== undefined) {
        call.result = inv.result;
      }
      calls.push(call);
    }
  }
  return calls;
}

function groundTruthText(truth: unknown): string | undefined {
  if (truth === undefined || truth === null) return undefined;
  if (typeof truth === "string") return truth;
  if (typeof truth === "number" || typeof truth === "boolean") return String(truth);
  return JSON.stringify(truth);
}

function contextOf(
  run: ScorerRun<unknown, unknown>,
  options: Pick<ScorekitScorerOptions, "context" | "contextExtractor">,
): Passage[] {
  if (options.context) return options.context;
  if (!isScorerRunOutputForAgent(run.output)) return [];
  if (options.contextExtractor) return options.contextExtractor(run.input as ScorerRunInputForAgent | undefined, run.output);
  return extractToolResults(run.output).map((t) => JSON.stringify({ tool: t.toolName, result: t.result }));
}
