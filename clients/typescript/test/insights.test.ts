// Insights through the client, against a real scorekit serve (see harness.ts), and the
// means and pass rates the client rounds as the command line prints them.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { ScorekitError, type Run } from "@scorekit/client";

import { fixed } from "../src/round.js";
import { repoRoot, useService } from "./harness.js";

const service = useService();
const run = promisify(execFile);

function jsonl(path: string): string {
  return readFileSync(join(repoRoot, path), "utf8");
}

describe("insights", () => {
  test("the example runs raise none; a bad deploy raises critical ones, listed, by agent and by id", async () => {
    const client = service.client;
    await client.importRuns(jsonl("examples/service/email-triage.jsonl"));
    await client.evaluate("email-triage", { limit: 270, scorers: ["prescreen"] }, { results: false, timeoutMs: 120_000 });
    const quiet = await client.listInsights({ wait: "30s" });
    assert.deepEqual(quiet.insights ?? [], [], "no false alarm on correct runs");

    await client.importRuns(jsonl("examples/service/email-triage-broken.jsonl"));
    await client.evaluate("email-triage", { limit: 100, scorers: ["prescreen"] }, { results: false, timeoutMs: 120_000 });
    const critical = (await client.listInsights({ wait: "30s", severity: "critical" })).insights ?? [];
    const gross = critical.find((i) => i.kind === "gross_failures");
    assert.ok(gross, `a critical gross_failures insight: ${JSON.stringify(critical.map((i) => i.title))}`);
    assert.equal(gross.agent, "email-triage");
    assert.equal(gross.scorer, "prescreen");
    assert.equal(gross.evidence.window.runs, 100);
    assert.ok((gross.evidence.worst ?? []).every((w) => w.flags?.includes("error_text") || w.flags?.includes("empty_output")));
    for (const i of critical) assert.equal(i.severity, "critical");

    const byAgent = (await client.listAgentInsights("email-triage", { severity: "critical" })).insights ?? [];
    assert.deepEqual(byAgent.map((i) => i.id).sort(), critical.map((i) => i.id).sort());
    const all = (await client.listAgentInsights("email-triage", { state: "all" })).insights ?? [];
    for (const i of critical) assert.ok(all.some((a) => a.id === i.id), `state all lists ${i.title}`);

    const one = await client.getInsight(gross.id);
    assert.equal(one.title, gross.title);
    assert.deepEqual(one.evidence, gross.evidence);

    // The window's mean as the CLI prints it, from the value the service sent.
    const raw = await client.api.GET("/v1/insights/{id}", { params: { path: { id: gross.id } } });
    const rawMean = raw.data?.evidence.window.mean;
    assert.equal(typeof rawMean, "number");
    assert.equal(one.evidence.window.mean, fixed(rawMean!, 2));

    const err = await client.getInsight("in_nosuchinsight").then(
      () => assert.fail("an unknown insight was found"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ScorekitError && err.code === "not_found", String(err));
  });

  test("an evaluation's mean and pass rate are the command line's for the same runs", async () => {
    const client = service.client;
    const runs = jsonl("examples/runs.jsonl")
      .trim()
      .split("\n")
      .map((l) => ({ ...(JSON.parse(l) as Run), agent: "seed" }));
    await client.importRuns(runs);
    const ev = await client.evaluate("seed", { limit: runs.length, scorers: ["prescreen"] }, { timeoutMs: 60_000 });
    const summary = ev.scorers?.find((s) => s.name === "prescreen");
    assert.ok(summary);

    // scorekit score prints the same runs' table: "prescreen  12  12  0.73  67%  0  0".
    const { stdout } = await run(process.env.SCOREKIT_BIN ?? join(repoRoot, "bin", "scorekit"), ["score", join(repoRoot, "examples/runs.jsonl")]);
    const row = stdout.split("\n").find((l) => l.startsWith("prescreen "))?.trim().split(/\s+/);
    assert.ok(row, stdout);
    assert.equal(summary.mean, Number(row[3]));
    assert.equal(summary.pass_rate, Number(row[4]!.replace("%", "")) / 100);

    // The service sent more digits than that.
    const raw = await client.api.GET("/v1/evaluations/{id}", { params: { path: { id: ev.id }, query: { results: false } } });
    const rawMean = raw.data?.scorers?.find((s) => s.name === "prescreen")?.mean;
    assert.notEqual(rawMean, summary.mean, "the service's mean has more digits than the CLI prints");
  });
});

describe("rounding as the command line prints", () => {
  // Go's %.2f rounds to the nearest, and an exact tie (a multiple of 1/8) to even.
  const cases: [string, number, number, number][] = [
    ["float noise", 0.8099999999999999, 2, 0.81],
    ["a mean to 2 decimals", 0.7125, 2, 0.71],
    ["just above a tie", 0.805, 2, 0.81],
    ["an exact tie goes to even, down", 0.125, 2, 0.12],
    ["an exact tie goes to even, up", 0.375, 2, 0.38],
    ["an exact tie at 0 decimals", 62.5, 0, 62],
    ["an integer stays", 1, 2, 1],
  ];
  for (const [name, x, digits, want] of cases) {
    test(name, () => assert.equal(fixed(x, digits), want));
  }
});

describe("Node.js version check", () => {
  const script = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "scripts", "check-node.mjs");
  const [major] = process.versions.node.split(".");
  for (const [name, range, ok] of [
    ["this Node.js meets the package's engines", undefined, true],
    ["an older Node.js than engines asks is refused with where to get one", ">=99", false],
    ["a minor version counts", `>=${major}.999`, false],
  ] as const) {
    test(name, async () => {
      const dir = mkdtempSync(join(tmpdir(), "scorekit-engines-"));
      try {
        const args = [script];
        if (range) {
          writeFileSync(join(dir, "package.json"), JSON.stringify({ engines: { node: range } }));
          args.push(join(dir, "package.json"));
        }
        const res = await run(process.execPath, args).then(
          () => ({ code: 0, stderr: "" }),
          (e: { code: number; stderr: string }) => e,
        );
        assert.equal(res.code === 0, ok, res.stderr);
        if (!ok) assert.match(res.stderr, /needs Node\.js .* or later .*nodejs\.org/s);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
