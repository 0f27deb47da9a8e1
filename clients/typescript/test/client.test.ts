// The client against a real scorekit serve (see harness.ts).
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";

import { ScorekitClient, ScorekitError, type Run } from "@scorekit/client";

import { judgeScore, repoRoot, useService } from "./harness.js";

const service = useService();

// rejects awaits a call that must fail and returns its ScorekitError.
async function rejects(call: Promise<unknown>): Promise<ScorekitError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof ScorekitError, `want a ScorekitError, got ${String(err)}`);
    return err;
  }
  assert.fail("the call succeeded; want a ScorekitError");
}

describe("score", () => {
  test("a correct short answer scores high with prescreen", async () => {
    const result = await service.client.score({
      scorer: "prescreen",
      run: { input: "What is the capital of France?", output: "Paris" },
    });
    assert.equal(result.status, "scored");
    assert.ok((result.score ?? 0) >= 0.8, `prescreen scored "Paris" ${result.score}; want >= 0.8`);
    assert.equal(result.passed, true);
  });

  test("an empty answer is flagged and does not pass", async () => {
    const result = await service.client.score({ scorer: "prescreen", run: { input: "What is the capital of France?", output: "" } });
    assert.equal(result.status, "scored");
    assert.equal(result.passed, false);
    assert.ok(result.flags?.includes("empty_output"), `flags ${JSON.stringify(result.flags)}; want empty_output`);
  });

  test("a judge scorer reaches the judge through the service", async () => {
    const result = await service.client.score({ scorer: "relevancy", run: { input: "What is the capital of France?", output: "Paris" } });
    assert.equal(result.status, "scored");
    assert.equal(result.score, judgeScore);
    assert.equal(result.telemetry.judge_calls, 1);
  });

  test("a scorer that does not apply is skipped with its reason, not scored 0", async () => {
    const result = await service.client.score({ scorer: "contextprecision", run: { input: "What is the capital of France?", output: "Paris" } });
    assert.equal(result.status, "skipped");
    assert.equal(result.score, undefined);
    assert.match(result.reason ?? "", /context/);
  });
});

describe("problem details", () => {
  test("an unknown scorer is 404 unknown_scorer and names the known ones", async () => {
    const err = await rejects(service.client.score({ scorer: "no-such-scorer", run: { input: "q", output: "a" } }));
    assert.equal(err.status, 404);
    assert.equal(err.code, "unknown_scorer");
    assert.match(err.detail, /no-such-scorer/);
    assert.match(err.detail, /prescreen/);
    assert.equal(err.problem?.code, "unknown_scorer");
  });

  test("a bad key is 401 unauthorized", async () => {
    const bad = new ScorekitClient({ baseUrl: service.svc.url, apiKey: "sk_not-a-key" });
    const err = await rejects(bad.score({ scorer: "prescreen", run: { input: "q", output: "a" } }));
    assert.equal(err.status, 401);
    assert.equal(err.code, "unauthorized");
    assert.ok(err.detail.length > 0);
  });

  test("no key at all is 401 unauthorized when the service has keys", async () => {
    const none = new ScorekitClient({ baseUrl: service.svc.url });
    const err = await rejects(none.listScorers());
    assert.equal(err.status, 401);
    assert.equal(err.code, "unauthorized");
  });

  test("a limit of 0 is 400 invalid_request that says the range", async () => {
    const err = await rejects(service.client.createEvaluation("assistant", { limit: 0 }));
    assert.equal(err.status, 400);
    assert.equal(err.code, "invalid_request");
    assert.match(err.detail, /limit/);
  });

  test("an unknown evaluation is 404 not_found", async () => {
    const err = await rejects(service.client.getEvaluation("ev_doesnotexist"));
    assert.equal(err.status, 404);
    assert.equal(err.code, "not_found");
  });

  test("a server that is not scorekit is a bad_response, not a problem it did not send", async () => {
    const other = new ScorekitClient({ baseUrl: service.svc.judgeUrl, apiKey: service.svc.key });
    const err = await rejects(other.listScorers());
    assert.equal(err.code, "bad_response");
    assert.equal(err.status, 404);
    assert.match(err.detail, /without a problem document/);
  });

  test("a service that is not there is unreachable, with the URL", async () => {
    // Port 1 on loopback: nothing listens there.
    const gone = new ScorekitClient({ baseUrl: "http://127.0.0.1:1" });
    const err = await rejects(gone.listScorers());
    assert.equal(err.status, 0);
    assert.equal(err.code, "unreachable");
    assert.match(err.detail, /127\.0\.0\.1:1/);
  });
});

describe("scopes and the tenant's judge key", () => {
  test("a read key reads, and is refused a change with 403 insufficient_scope naming admin", async () => {
    const readKey = (await service.svc.cli("keys", "create", "--tenant", "acme", "--scope", "read")).trim();
    const reader = new ScorekitClient({ baseUrl: service.svc.url, apiKey: readKey });
    assert.ok(Array.isArray(await reader.listScorers()));
    const err = await rejects(reader.putPolicy("assistant", { scorers: ["prescreen"], sample_rate: 1 }));
    assert.equal(err.status, 403);
    assert.equal(err.code, "insufficient_scope");
    assert.match(err.detail, /needs a key with scope admin/);
  });

  test("a stored judge key is used for the tenant's calls and never returned", async () => {
    const secret = "sk-ts-tenant-7c1e9a";
    await service.client.setJudgeKey("default", secret);
    const endpoints = await service.client.listJudgeEndpoints();
    const main = endpoints.find((e) => e.name === "default");
    assert.equal(main?.key.stored, true);
    assert.equal(main?.model, "test-judge");
    assert.ok(!JSON.stringify(endpoints).includes(secret), "the listing holds the key");
    const before = service.svc.judgeAuth().length;
    const result = await service.client.score({ scorer: "relevancy", run: { input: "Which key is this?", output: "The tenant's." } });
    assert.equal(result.status, "scored");
    assert.deepEqual(service.svc.judgeAuth().slice(before), [`Bearer ${secret}`]);
    await service.client.deleteJudgeKey("default");
    const err = await rejects(service.client.deleteJudgeKey("default"));
    assert.equal(err.code, "not_found");
    assert.ok(!service.svc.log().includes(secret), "serve's log holds the key");
  });
});

describe("runs and evaluations", () => {
  const lines = readFileSync(join(repoRoot, "examples/service/assistant.jsonl"), "utf8").trim().split("\n");
  const runs = lines.map((l) => JSON.parse(l) as Run);

  test("import stores runs once, and evaluating the last 10 scores exactly the 10 newest", async () => {
    const first = await service.client.importRuns(runs);
    assert.equal(first.stored, runs.length);
    assert.equal(first.rejected, 0);

    const again = await service.client.importRuns(runs);
    assert.equal(again.stored, 0);
    assert.equal(again.duplicates, runs.length);

    const newest = [...runs].sort((a, b) => Date.parse(b.time!) - Date.parse(a.time!)).slice(0, 10).map((r) => String(r.id));
    const page = await service.client.listRuns("assistant", { limit: 10 });
    assert.deepEqual(page.runs?.map((r) => r.id), newest);

    const ev = await service.client.evaluate("assistant", { limit: 10, scorers: ["prescreen"] }, { timeoutMs: 60_000 });
    assert.equal(ev.status, "done");
    assert.equal(ev.agent, "assistant");
    assert.equal(ev.runs, 10);
    assert.equal(ev.done_results, 10);
    const results = ev.results ?? [];
    assert.deepEqual(new Set(results.map((r) => r.run_id)), new Set(newest));
    for (const r of results) {
      assert.equal(r.scorer, "prescreen");
      assert.notEqual(r.scorer_version, "");
      if (r.status === "scored") assert.equal(typeof r.score, "number");
      else assert.equal(r.score, null, `a ${r.status} result carries no score`);
    }
    const summary = ev.scorers?.find((s) => s.name === "prescreen");
    assert.ok(summary, "the evaluation summarizes prescreen");
    assert.equal(summary.scored + summary.skipped + summary.failed, 10);
    assert.equal(summary.pending, 0);

    // The results are kept with the run.
    const stored = await service.client.getRun(newest[0]!);
    assert.equal(stored.agent, "assistant");
    assert.ok(stored.results?.some((r) => r.evaluation_id === ev.id && r.scorer === "prescreen"));

    // And the evaluation is listed for the agent.
    const listed = await service.client.listEvaluations("assistant");
    assert.ok(listed.some((e) => e.id === ev.id));
  });

  test("JSONL import keeps the good lines and rejects a bad one with its line number", async () => {
    const jsonl = [
      JSON.stringify({ id: "jsonl-1", input: "What is 2+2?", output: "4", time: "2025-07-01T10:00:00Z" }),
      "{not json",
      JSON.stringify({ id: "jsonl-3", input: "Capital of Italy?", output: "Rome", time: "2025-07-01T10:01:00Z" }),
    ].join("\n");
    const res = await service.client.importRuns(jsonl, { agent: "jsonl-agent" });
    assert.equal(res.stored, 2);
    assert.equal(res.rejected, 1);
    const bad = res.runs?.find((r) => r.status === "rejected");
    assert.equal(bad?.line, 2);
    assert.ok((bad?.error ?? "").length > 0, "a rejected line says why");
  });

  test("an evaluation of a judge scorer that fails keeps the failure, never a 0", async () => {
    await service.client.importRuns([{ id: "fault-1", input: "JUDGE-FAULT: grade me", output: "fine", time: "2025-08-01T00:00:00Z" }], {
      agent: "faulty",
    });
    const ev = await service.client.evaluate("faulty", { limit: 1, scorers: ["relevancy"] }, { timeoutMs: 90_000 });
    const r = ev.results?.[0];
    assert.equal(r?.status, "failed");
    assert.equal(r?.score, null);
    assert.equal(r?.error?.code, "judge_error");
    const summary = ev.scorers?.find((s) => s.name === "relevancy");
    assert.equal(summary?.failed, 1);
    assert.equal(summary?.mean, null, "a failed result enters no mean");
  });

  test("waitForEvaluation gives up with wait_timeout, the evaluation going on", async () => {
    // One run through a scorer whose judge always fails: the job retries with backoff, so
    // the evaluation is not done within 1 ms.
    await service.client.importRuns([{ id: "slow-1", input: "JUDGE-FAULT again", output: "x", time: "2025-08-02T00:00:00Z" }], { agent: "slow" });
    const started = await service.client.createEvaluation("slow", { limit: 1, scorers: ["relevancy"] });
    const err = await rejects(service.client.waitForEvaluation(started.id, { timeoutMs: 1 }));
    assert.equal(err.code, "wait_timeout");
    assert.match(err.detail, new RegExp(started.id));
  });

  test("an on-arrival policy evaluates imported runs; without it, nothing does", async () => {
    const client = service.client;
    const policy = await client.putPolicy("arrivals", { scorers: ["prescreen"], sample_rate: 1 });
    assert.deepEqual(policy.scorers, ["prescreen"]);
    assert.equal((await client.getPolicy("arrivals")).sample_rate, 1);

    const res = await client.importRuns(
      [1, 2, 3].map((i) => ({ id: `arrival-${i}`, input: `What is ${i} + ${i}?`, output: String(2 * i), time: `2025-09-0${i}T00:00:00Z` })),
      { agent: "arrivals" },
    );
    assert.equal(res.evaluations?.length, 1, `one evaluation on arrival: ${JSON.stringify(res)}`);
    const ev = await client.waitForEvaluation(res.evaluations![0]!, { results: false, timeoutMs: 60_000 });
    assert.equal(ev.trigger, "arrival");
    assert.equal(ev.runs, 3);
    assert.equal(ev.results ?? null, null, "results: false leaves them out");
    assert.equal(ev.scorers?.[0]?.scored, 3);

    await client.deletePolicy("arrivals");
    const err = await rejects(client.getPolicy("arrivals"));
    assert.equal(err.code, "not_found");
    const later = await client.importRuns([{ id: "arrival-4", input: "What is 4 + 4?", output: "8" }], { agent: "arrivals" });
    assert.equal(later.evaluations?.length ?? 0, 0);
  });

  test("a tenant over its request rate gets 429 rate_limited with retryAfter", async () => {
    const dir = mkdtempSync(join(tmpdir(), "scorekit-policy-"));
    const policy = join(dir, "policy.json");
    writeFileSync(policy, JSON.stringify({ requests_per_second: 0.1 }));
    await service.svc.cli("tenants", "create", "slow", "--policy", policy);
    const key = (await service.svc.cli("keys", "create", "--tenant", "slow")).trim();
    rmSync(dir, { recursive: true });
    const slow = new ScorekitClient({ baseUrl: service.svc.url, apiKey: key });
    let limited: ScorekitError | undefined;
    for (let i = 0; i < 20 && !limited; i++) {
      try {
        await slow.listScorers();
      } catch (err) {
        if (!(err instanceof ScorekitError)) throw err;
        limited = err;
      }
    }
    assert.ok(limited, "20 requests at 0.1 per second were all answered");
    assert.equal(limited.status, 429);
    assert.equal(limited.code, "rate_limited");
    assert.ok((limited.retryAfter ?? 0) > 0, `retryAfter ${limited.retryAfter}`);
  });

  test("scorers and agents are listed", async () => {
    const scorers = await service.client.listScorers();
    assert.ok(scorers.some((s) => s.name === "prescreen" && s.range.max === 1));
    const agents = await service.client.listAgents();
    assert.ok(agents.agents?.some((a) => a.name === "assistant" && a.runs === runs.length));
  });
});

describe("published scorers", () => {
  test("publish, list versions, promote, roll back and delete a configured scorer", async () => {
    const c = service.client;
    const v1 = await c.publishScorer({ name: "order_json", base: "json_valid", config: { schema: { type: "object", required: ["order"] } } });
    assert.equal(v1.ref, "order_json@1");
    assert.equal(v1.kind, "configured");
    assert.equal(v1.promoted, true);
    assert.match(v1.digest, /^sha256:[0-9a-f]{64}$/);
    const v2 = await c.publishScorer({ name: "order_json", base: "json_valid", config: { schema: { type: "object", required: ["order", "total"] } } });
    assert.equal(v2.version, 2);
    assert.equal(v2.promoted, false);
    assert.notEqual(v2.digest, v1.digest);

    const promoted = await c.promoteScorer("order_json", 2);
    assert.equal(promoted.promoted, true);
    assert.deepEqual((await c.listScorerVersions("order_json")).map((v) => [v.version, v.promoted]), [[1, false], [2, true]]);
    await c.promoteScorer("order_json", 1);
    assert.equal((await c.getScorerVersion("order_json", 1)).promoted, true);

    await c.deleteScorerVersion("order_json", 2);
    assert.equal((await c.getScorerVersion("order_json", 2)).deleted, true);
    const mine = (await c.listScorers()).find((s) => s.name === "order_json");
    assert.equal(mine?.source, "tenant");
    assert.equal(mine?.promoted, 1);
  });

  test("a refused publish is 422 scorer_refused with what to fix", async () => {
    const err = await rejects(service.client.publishScorer({ name: "not_wasm", module: new TextEncoder().encode("#!/bin/sh\n") }));
    assert.equal(err.status, 422);
    assert.equal(err.code, "scorer_refused");
    assert.match(err.detail ?? "", /not a WebAssembly module/);
  });

  test("under the agreement gate a worse version is 409 agreement_gate; an override promotes it, recorded", async () => {
    const dir = mkdtempSync(join(tmpdir(), "scorekit-policy-"));
    const policy = join(dir, "policy.json");
    writeFileSync(policy, JSON.stringify({ promotion_gate: true }));
    await service.svc.cli("tenants", "create", "gated", "--policy", policy);
    const key = (await service.svc.cli("keys", "create", "--tenant", "gated")).trim();
    rmSync(dir, { recursive: true });
    const c = new ScorekitClient({ baseUrl: service.svc.url, apiKey: key });
    // Equal to the answer, equal but for case, or different; people pass the first two.
    const outputs = ["Paris", "paris", "Rome"];
    const runs: Run[] = Array.from({ length: 33 }, (_, i) => ({
      id: `g${i}`,
      agent: "geo",
      input: "capital of France?",
      output: outputs[i % 3]!,
      expected: "Paris",
      time: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
    }));
    await c.importRuns(runs);
    await c.publishScorer({ name: "matcher", base: "exact_match", config: { ignore_case: true } });
    await c.publishScorer({ name: "matcher", base: "exact_match", config: { ignore_case: false } });
    const ev = await c.evaluate("geo", { limit: 33, scorers: ["matcher@1", "matcher@2"] });
    assert.equal(ev.status, "done");
    for (const [i, r] of runs.entries()) await c.putLabel(String(r.id), "matcher", { labeller: "ana", passed: i % 3 !== 2 });

    const err = await rejects(c.promoteScorer("matcher", 2));
    assert.equal(err.status, 409);
    assert.equal(err.code, "agreement_gate");
    assert.match(err.detail ?? "", /on the same 33 labelled runs, matcher@2 \(candidate\) has kappa 0\.\d+ .*matcher@1 \(current\) kappa 1\.000/);

    const v = await c.promoteScorer("matcher", 2, { override: "the labels predate the policy" });
    assert.equal(v.promoted, true);
    assert.equal(v.gate?.report.decision, "refuse");
    const recorded = (await c.listScorerVersions("matcher"))[1]!.promotions?.[0]?.gate;
    assert.equal(recorded?.override?.reason, "the labels predate the policy");
    assert.ok(recorded?.override?.by.startsWith("key "), `by ${recorded?.override?.by}`);
    assert.equal(recorded?.report.runs, 33);
  });
});

describe("deletion and export", () => {
  test("a deleted run stays deleted; the export and the audit log show what happened", async () => {
    const client = service.client;
    const gone: Run[] = [
      { id: "forget-1", input: "My email is ann@example.com", output: "Noted." },
      { id: "forget-2", input: "q", output: "a" },
    ];
    await client.importRuns(gone, { agent: "forgetful" });
    const d = await client.deleteRun("forget-1");
    assert.equal(d.runs, 1);
    const again = await client.importRuns(gone, { agent: "forgetful" });
    assert.equal(again.deleted, 1);
    assert.equal(again.runs?.find((r) => r.id === "forget-1")?.status, "deleted");
    assert.equal((await rejects(client.getRun("forget-1"))).code, "not_found");

    const kinds = new Map<string, number>();
    let sawKept = false;
    for await (const line of client.export()) {
      kinds.set(line.kind, (kinds.get(line.kind) ?? 0) + 1);
      if (line.kind === "run") {
        const id = (line.data as { id: string }).id;
        assert.notEqual(id, "forget-1", "the export holds the deleted run");
        sawKept ||= id === "forget-2";
      }
    }
    assert.ok(sawKept, "the export lacks the run kept");
    assert.equal(kinds.get("end"), 1);
    assert.equal(kinds.get("tenant"), 1);

    const log = await client.auditLog({ limit: 10 });
    assert.deepEqual(
      log.slice(0, 2).map((e) => [e.action, e.subject]),
      [
        ["export", "acme"],
        ["delete_run", "forget-1"],
      ],
    );
    assert.match(log[0]!.actor, /^key sk_/);

    const agent = await client.deleteAgent("forgetful");
    assert.equal(agent.runs, 1);
  });

  test("a tenant deletes itself; its key then opens nothing", async () => {
    await service.svc.cli("tenants", "create", "leaving");
    const key = (await service.svc.cli("keys", "create", "--tenant", "leaving")).trim();
    const leaving = new ScorekitClient({ baseUrl: service.svc.url, apiKey: key });
    await leaving.importRuns([{ id: "l1", input: "q", output: "a" }], { agent: "bot" });
    const d = await leaving.deleteTenant();
    assert.equal(d.runs, 1);
    assert.equal((await rejects(leaving.listAgents())).status, 401);
  });
});
