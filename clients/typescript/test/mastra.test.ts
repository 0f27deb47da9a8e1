// The Mastra adapter inside Mastra's own scorer runner (@mastra/core, @mastra/evals from
// npm), scoring through a real scorekit serve (see harness.ts).
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { Mastra } from "@mastra/core";
import { Agent } from "@mastra/core/agent";
import { ScorerRunError, runEvals } from "@mastra/core/evals";
import { InMemoryStore } from "@mastra/core/storage";
import { createMockModel } from "@mastra/core/test-utils/llm-mock";
import { createContentSimilarityScorer } from "@mastra/evals/scorers/prebuilt";
import { createAgentTestRun, createTestMessage, createToolInvocation } from "@mastra/evals/scorers/utils";

import { ScorekitClient, ScorekitError } from "@scorekit/client";
import { ScoreFailedError, createScorekitScorer, scorekitErrorOf, toScorekitRun } from "@scorekit/client/mastra";

import { judgeFault, judgeScore, useService } from "./harness.js";

const service = useService();

function agentRun(question: string, answer: string, extra: Partial<Parameters<typeof createAgentTestRun>[0]> = {}) {
  return createAgentTestRun({
    inputMessages: [createTestMessage({ content: question, role: "user" })],
    output: [createTestMessage({ content: answer, role: "assistant" })],
    ...extra,
  });
}

// failure awaits a scorer run that must throw and returns the error Mastra threw and the
// scorekit error behind it (Mastra passes a step's error on as a copy: scorekitErrorOf
// finds it).
async function failure(call: Promise<unknown>): Promise<{ err: unknown; cause: unknown }> {
  try {
    await call;
  } catch (err) {
    return { err, cause: scorekitErrorOf(err) };
  }
  assert.fail("the scorer run succeeded; want it to throw");
}

describe("scorer.run", () => {
  test("prescreen scores Paris high where Mastra's content similarity gives it almost nothing", async () => {
    const run = agentRun("What is the capital of France?", "Paris");
    const scorekit = await createScorekitScorer({ client: service.client, scorer: "prescreen" }).run(run);
    assert.equal(scorekit.notScorable, undefined);
    assert.ok(scorekit.score !== undefined && scorekit.score >= 0.8, `prescreen via Mastra scored Paris ${scorekit.score}`);
    assert.ok(typeof scorekit.reason === "string" && scorekit.reason.length > 0);
    assert.equal(scorekit.analyzeStepResult?.status, "scored");
    // The same run through one of Mastra's own word-overlap scorers, for contrast.
    const mastra = await createContentSimilarityScorer().run(run);
    assert.ok(mastra.score !== undefined && mastra.score < 0.2, `content similarity ${mastra.score}`);
  });

  test("relevancy replaces Mastra's relevancy scorer: the judge's verdict comes back as the score", async () => {
    const scorer = createScorekitScorer({ client: service.client, scorer: "relevancy", id: "answer-relevancy" });
    assert.equal(scorer.id, "answer-relevancy");
    const result = await scorer.run(agentRun("What is the capital of France?", "Paris"));
    assert.equal(result.score, judgeScore);
    assert.match(String(result.reason), /answers/);
  });

  test("skipped becomes notScorable with the reason, and no score", async () => {
    const result = await createScorekitScorer({ client: service.client, scorer: "contextprecision" }).run(agentRun("What is the capital of France?", "Paris"));
    assert.equal(result.score, undefined);
    assert.ok(result.notScorable, "a skipped result is not scorable");
    assert.equal(result.notScorable.step, "analyze");
    assert.match(result.notScorable.reason ?? "", /context/);
  });

  test("failed throws ScoreFailedError with the code, never a score of 0", async () => {
    const scorer = createScorekitScorer({ client: service.client, scorer: "relevancy" });
    const { err, cause } = await failure(scorer.run(agentRun(`${judgeFault}: what is 2+2?`, "4")));
    assert.ok(err instanceof ScorerRunError, `Mastra wraps a failing step: got ${String(err)}`);
    assert.equal(err.failedStep, "analyze");
    assert.equal(err.result?.score, undefined);
    assert.ok(cause instanceof ScoreFailedError, `the cause is the scorekit failure: got ${String(cause)}`);
    assert.equal(cause.code, "judge_error");
    assert.equal(cause.scorer, "relevancy");
    assert.match(cause.detail, /judge/);
    assert.equal((cause.result as { status?: string }).status, "failed");
  });

  test("a problem the service answers comes through with its code", async () => {
    const { cause } = await failure(createScorekitScorer({ client: service.client, scorer: "no-such-scorer" }).run(agentRun("q", "a")));
    assert.ok(cause instanceof ScorekitError);
    assert.equal(cause.code, "unknown_scorer");
    assert.equal(cause.status, 404);

    const badKey = new ScorekitClient({ baseUrl: service.svc.url, apiKey: "sk_wrong" });
    const { cause: auth } = await failure(createScorekitScorer({ client: badKey, scorer: "prescreen" }).run(agentRun("q", "a")));
    assert.ok(auth instanceof ScorekitError);
    assert.equal(auth.code, "unauthorized");
  });

  test("groundTruth reaches scorekit as expected", async () => {
    const exact = createScorekitScorer({ client: service.client, scorer: "exact_match" });
    const right = await exact.run({ ...agentRun("Capital of France?", "Paris"), groundTruth: "Paris" });
    assert.equal(right.score, 1);
    const wrong = await exact.run({ ...agentRun("Capital of France?", "Paris"), groundTruth: "Lyon" });
    assert.equal(wrong.score, 0);
  });

  test("context from the options, or from tool results, reaches scorekit", async () => {
    // similarity mode grades the passages against the reference answer, without a judge.
    const run = { ...agentRun("What is the capital of France?", "Paris is the capital of France."), groundTruth: "Paris is the capital of France." };
    const config = { mode: "similarity" };
    const without = await createScorekitScorer({ client: service.client, scorer: "contextprecision", config }).run(run);
    assert.ok(without.notScorable, "no context: not scorable");

    const given = await createScorekitScorer({
      client: service.client,
      scorer: "contextprecision",
      config,
      context: ["Paris is the capital and largest city of France.", "Bananas are yellow."],
    }).run(run);
    assert.equal(given.notScorable, undefined);
    assert.equal(typeof given.score, "number");

    const withTool = {
      groundTruth: "Paris is the capital of France.",
      ...createAgentTestRun({
      inputMessages: [createTestMessage({ content: "What is the capital of France?", role: "user" })],
      output: [
        createTestMessage({
          content: "Paris is the capital of France.",
          role: "assistant",
          toolInvocations: [createToolInvocation({ toolCallId: "c1", toolName: "search", args: { q: "capital of France" }, result: { text: "Paris is the capital of France." } })],
        }),
      ],
      }),
    };
    const mapped = toScorekitRun(withTool);
    assert.equal(mapped.context?.length, 1);
    assert.match(String(mapped.context?.[0]), /"tool":"search"/);
    const fromTools = await createScorekitScorer({ client: service.client, scorer: "contextprecision", config }).run(withTool);
    assert.equal(typeof fromTools.score, "number");
  });
});

describe("toScorekitRun", () => {
  test("maps Mastra's agent run onto scorekit's run", () => {
    const run = createAgentTestRun({
      inputMessages: [createTestMessage({ content: "Summarize this email for Slack: the server is down.", role: "user" })],
      output: [
        createTestMessage({ content: "Looking it up.", role: "assistant" }),
        createTestMessage({ content: ":red_circle: Server down, on-call paged.", role: "assistant" }),
      ],
      systemMessages: [{ role: "system", content: "You triage raw emails into Slack summaries." }],
      rememberedMessages: [createTestMessage({ content: "earlier question", role: "user" })],
      runId: "run-42",
    });
    const mapped = toScorekitRun({ ...run, groundTruth: { label: "notify" } }, { agent: "email-triage" });
    assert.equal(mapped.id, "run-42");
    assert.equal(mapped.agent, "email-triage");
    assert.equal(mapped.input, "Summarize this email for Slack: the server is down.");
    assert.equal(mapped.output, ":red_circle: Server down, on-call paged.", "the final assistant message is the output");
    assert.equal(mapped.expected, '{"label":"notify"}');
    assert.equal(mapped.metadata?.instructions, "You triage raw emails into Slack summaries.");
    assert.match(String(mapped.metadata?.conversation), /earlier question/);
    assert.equal(mapped.context, undefined);
  });

  test("an agent that acted through a tool and said nothing is judged on its call", async () => {
    const run = createAgentTestRun({
      inputMessages: [createTestMessage({ content: "Cancel my 3pm meeting", role: "user" })],
      output: [
        createTestMessage({
          content: "",
          role: "assistant",
          toolInvocations: [createToolInvocation({ toolCallId: "c1", toolName: "cancel_event", args: { time: "15:00" }, result: { cancelled: true } })],
        }),
      ],
    });
    const mapped = toScorekitRun(run);
    assert.deepEqual(mapped.tool_calls, [{ id: "c1", name: "cancel_event", arguments: { time: "15:00" }, result: { cancelled: true } }]);
    const result = await createScorekitScorer({ client: service.client, scorer: "prescreen" }).run(run);
    assert.equal(result.score, 1, `the seed's action turn scored ${result.score}: ${result.reason}`);
    const accuracy = await createScorekitScorer({
      client: service.client,
      scorer: "tool_calls",
      config: { expected: [{ name: "cancel_event", arguments: { time: "15:00" } }] },
    }).run(run);
    assert.equal(accuracy.score, 1);
  });

  test("an output with no assistant text maps to an empty output, which scorekit flags", async () => {
    const run = createAgentTestRun({ inputMessages: [createTestMessage({ content: "What is 2+2?", role: "user" })], output: [] });
    assert.equal(toScorekitRun(run).output, "");
    const result = await createScorekitScorer({ client: service.client, scorer: "prescreen" }).run(run);
    assert.ok(result.score !== undefined && result.score < 0.5, `an empty answer scored ${result.score}`);
    assert.ok(result.analyzeStepResult?.flags?.includes("empty_output"));
  });
});

describe("runEvals", () => {
  // The agent under evaluation answers from a scripted model (no LLM can run in a test); the
  // scorers, Mastra's runner and the scorekit service are all real.
  function agent(answer: string) {
    return new Agent({
      id: "capitals",
      name: "capitals",
      instructions: "Answer with the city's name only.",
      model: createMockModel({ mockText: answer, version: "v2" }) as never,
    });
  }

  test("an agent evaluated with scorekit scorers beside Mastra's own", async () => {
    const result = await runEvals({
      target: agent("Paris"),
      data: [{ input: "What is the capital of France?" }, { input: "And the capital of France, again?" }],
      scorers: [createScorekitScorer({ client: service.client, scorer: "prescreen" }), createScorekitScorer({ client: service.client, scorer: "relevancy" }), createContentSimilarityScorer()],
    });
    assert.equal(result.summary.totalItems, 2);
    assert.ok(result.scores["scorekit-prescreen"] >= 0.8, `prescreen mean ${result.scores["scorekit-prescreen"]}`);
    assert.equal(result.scores["scorekit-relevancy"], judgeScore);
    assert.ok(result.scores["content-similarity-scorer"] < 0.2, JSON.stringify(result.scores));
    assert.equal(result.summary.notScorable, undefined);
  });

  test("skipped runs are counted as not scorable and left out of the scores", async () => {
    const result = await runEvals({
      target: agent("Paris"),
      data: [{ input: "What is the capital of France?" }],
      scorers: [createScorekitScorer({ client: service.client, scorer: "contextprecision" }), createScorekitScorer({ client: service.client, scorer: "prescreen" })],
    });
    assert.deepEqual(result.summary.notScorable, { "scorekit-contextprecision": 1 });
    assert.equal(result.scores["scorekit-contextprecision"], undefined, JSON.stringify(result.scores));
    assert.ok(result.scores["scorekit-prescreen"] >= 0.8);
  });

  test("a failed scorer fails the eval instead of averaging in a 0", async () => {
    const { err, cause } = await failure(
      runEvals({
        target: agent("4"),
        data: [{ input: `${judgeFault}: what is 2+2?` }],
        scorers: [createScorekitScorer({ client: service.client, scorer: "relevancy" })],
      }),
    );
    assert.match(String(err), /scorekit-relevancy/);
    assert.ok(cause instanceof ScoreFailedError, `want a ScoreFailedError behind ${String(err)}`);
    assert.equal(cause.code, "judge_error");
  });
});

describe("an agent's own scorers", () => {
  test("Mastra scores each answer with the scorekit scorer and stores the score", async () => {
    const relevancy = createScorekitScorer({ client: service.client, scorer: "relevancy", id: "answer-relevancy" });
    const storage = new InMemoryStore();
    const mastra = new Mastra({
      logger: false,
      storage,
      agents: {
        capitals: new Agent({
          id: "capitals",
          name: "capitals",
          instructions: "Answer with the city's name only.",
          model: createMockModel({ mockText: "Paris", version: "v2" }) as never,
          scorers: { relevancy: { scorer: relevancy, sampling: { type: "ratio", rate: 1 } } },
        }),
      },
    });
    const answer = await mastra.getAgent("capitals").generate("What is the capital of France?");
    assert.equal(answer.text, "Paris");

    // Mastra scores in the background after the answer: wait for the stored score (at most
    // 30 s; the wait ends as soon as it is there).
    const scores = await storage.getStore("scores");
    assert.ok(scores, "the in-memory store keeps scores");
    let stored: { score: number; reason?: string; entityId: string }[] = [];
    for (const end = Date.now() + 30_000; stored.length === 0 && Date.now() < end; ) {
      stored = (await scores.listScoresByScorerId({ scorerId: "answer-relevancy", pagination: { page: 0, perPage: 10 } })).scores;
      if (stored.length === 0) await new Promise((ok) => setTimeout(ok, 100));
    }
    assert.equal(stored.length, 1, "Mastra stored the scorekit score");
    assert.equal(stored[0]!.score, judgeScore);
    assert.equal(stored[0]!.entityId, "capitals");
    assert.match(stored[0]!.reason ?? "", /answers/);
  });
});
