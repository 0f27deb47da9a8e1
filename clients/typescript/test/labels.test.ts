// Labels and a scorer's agreement with them through the client, against a real scorekit
// serve (see harness.ts).
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { ScorekitError, type LabelLine } from "@scorekit/client";

import { useService } from "./harness.js";

const service = useService();

describe("labels", () => {
  test("labels given one by one and from JSONL are stored, listed, measured against the scorer and removed", async () => {
    const client = service.client;
    const runs = Array.from({ length: 6 }, (_, i) => ({
      id: `lab-${i}`,
      agent: "labelled",
      input: `What is ${i} plus ${i}?`,
      output: i % 2 === 0 ? `${2 * i}` : "",
    }));
    await client.importRuns(runs);
    const ev = await client.evaluate("labelled", { limit: 6, scorers: ["prescreen"] }, { timeoutMs: 60_000 });
    const passed = new Map((ev.results ?? []).map((r) => [r.run_id, r.passed === true]));
    assert.equal(passed.size, 6);

    const first = await client.putLabel("lab-0", "prescreen", { labeller: "ana", passed: passed.get("lab-0")!, note: "right" });
    assert.equal(first.run_id, "lab-0");
    assert.equal(first.note, "right");

    // The others from lines, the scorer's verdict except on lab-1, and one bad line.
    const lines: LabelLine[] = runs.slice(1).map((r) => ({
      run_id: r.id,
      scorer: "prescreen",
      labeller: "ana",
      passed: r.id === "lab-1" ? !passed.get(r.id) : passed.get(r.id)!,
    }));
    lines.push({ run_id: "no-such-run", scorer: "prescreen", labeller: "ana", passed: true });
    const imported = await client.importLabels(lines);
    assert.equal(imported.stored, 5);
    assert.equal(imported.rejected, 1);
    const bad = (imported.lines ?? []).find((l) => l.status === "rejected");
    assert.equal(bad?.line, 6);
    assert.match(bad?.error ?? "", /no run "no-such-run"/);

    const page = await client.listLabels({ scorer: "prescreen", limit: 4 });
    assert.equal((page.labels ?? []).length, 4);
    assert.ok(page.next);
    const rest = await client.listLabels({ scorer: "prescreen", limit: 4, cursor: page.next });
    assert.deepEqual((rest.labels ?? []).map((l) => l.run_id), ["lab-4", "lab-5"]);

    const agreement = await client.getAgreement("prescreen");
    assert.equal(agreement.pass_fail?.runs, 6);
    assert.equal(agreement.pass_fail?.accuracy.value, 5 / 6);
    assert.equal(agreement.pass_fail?.accuracy.n, 6);
    assert.deepEqual((agreement.disagreements ?? []).map((d) => d.run_id), ["lab-1"]);
    assert.equal(agreement.not_scored.runs, 0);

    // A labelled run the scorer has not scored: counted, then scored through the queue.
    await client.importRuns([{ id: "lab-late", agent: "labelled", input: "What is 7 plus 7?", output: "14" }]);
    await client.putLabel("lab-late", "prescreen", { labeller: "ana", passed: true });
    assert.equal((await client.getAgreement("prescreen")).not_scored.no_result, 1);
    const started = await client.scoreLabelled("prescreen");
    assert.equal(started.runs, 1);
    assert.equal(started.evaluations?.length, 1);
    await client.waitForEvaluation(started.evaluations![0]!, { timeoutMs: 60_000 });
    const scoredNow = await client.getAgreement("prescreen");
    assert.equal(scoredNow.not_scored.runs, 0);
    assert.equal(scoredNow.pass_fail?.runs, 7);

    await client.deleteLabel("lab-1", "prescreen", "ana");
    assert.deepEqual(await client.listRunLabels("lab-1"), []);
    const after = await client.getAgreement("prescreen");
    assert.equal(after.pass_fail?.runs, 6);
    assert.equal(after.pass_fail?.accuracy.value, 1);

    const err = await client.putLabel("lab-2", "prescreen", { labeller: "ana", passed: true, score: 1 }).then(
      () => assert.fail("a label with two values was stored"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ScorekitError);
    assert.equal(err.code, "invalid_request");
    assert.match(err.detail, /exactly one of/);
  });
});
