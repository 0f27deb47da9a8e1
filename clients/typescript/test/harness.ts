// A real `scorekit serve` for the tests: the binary built from this repository
// (bin/scorekit), a temporary SQLite database, a tenant and a key made with the CLI, and a
// free loopback port picked by the kernel (--addr 127.0.0.1:0; the address is read from what
// serve prints). Scorers that need an LLM judge talk to a small OpenAI-compatible endpoint
// started here (the only stand-in: an LLM cannot run in a test), which answers every
// relevancy prompt with a fixed verdict and a prompt containing JUDGE-FAULT with prose, the
// way a misbehaving model does.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before } from "node:test";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { ScorekitClient } from "@scorekit/client";

const run = promisify(execFile);

/** The repository root (this file is compiled to clients/typescript/build/test/). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");

/** The verdict the judge gives every relevancy prompt. */
export const judgeScore = 0.9;
/** A marker that makes the judge answer prose instead of JSON (the scorer then fails). */
export const judgeFault = "JUDGE-FAULT";

export interface Service {
  /** http://127.0.0.1:PORT */
  url: string;
  /** The key of tenant `acme`. */
  key: string;
  /** The judge's base URL (an HTTP server that is not a scorekit service). */
  judgeUrl: string;
  /** Everything serve wrote to stderr so far. */
  log: () => string;
  /** The Authorization header of every request the judge received, in order. */
  judgeAuth: () => string[];
  /** Runs a scorekit command on the service's database. */
  cli: (...args: string[]) => Promise<string>;
  stop: () => Promise<void>;
}

function binary(): string {
  const bin = resolve(process.env.SCOREKIT_BIN ?? join(repoRoot, "bin", "scorekit"));
  if (!existsSync(bin)) {
    throw new Error(
      `${bin} not found: build it in the repository root with \`go build -o bin/scorekit ./cmd/scorekit\` (or make build), or set SCOREKIT_BIN`,
    );
  }
  return bin;
}

async function startJudge(auth: string[]): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method === "POST") auth.push(req.headers.authorization ?? "");
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      res.setHeader("Content-Type", "application/json");
      if (req.method === "GET" && req.url?.endsWith("/models")) {
        res.end(JSON.stringify({ object: "list", data: [{ id: "test-judge", object: "model", owned_by: "test" }] }));
        return;
      }
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.statusCode = 404;
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: "invalid_request_error" } }));
        return;
      }
      const request = JSON.parse(body) as { model: string; messages: { content: string }[] };
      const prompt = request.messages.map((m) => m.content).join("\n");
      const content = prompt.includes(judgeFault)
        ? "I would rather not grade this one."
        : JSON.stringify({ reasoning: "The output answers what the input asked.", score: judgeScore });
      res.end(
        JSON.stringify({
          id: "chatcmpl-test",
          object: "chat.completion",
          created: 0,
          model: request.model,
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return server;
}

/** startService starts the judge and `scorekit serve`, with tenant `acme` and its key. */
export async function startService(): Promise<Service> {
  const bin = binary();
  const dir = mkdtempSync(join(tmpdir(), "scorekit-ts-"));
  const db = join(dir, "scorekit.db");
  const cli = async (...args: string[]) => (await run(bin, [...args, "--db", db], { cwd: dir })).stdout;
  await cli("tenants", "create", "acme");
  const key = (await cli("keys", "create", "--tenant", "acme")).trim();
  const auth: string[] = [];
  const judge = await startJudge(auth);
  const judgeURL = `http://127.0.0.1:${(judge.address() as AddressInfo).port}/v1`;

  let stderr = "";
  // --max-attempts 2: a judge failure is retried once (River's backoff, about a second), then
  // stored as failed, so the tests see a failure end without waiting minutes.
  const child: ChildProcess = spawn(
    bin,
    ["serve", "--addr", "127.0.0.1:0", "--db", db, "--judge-url", judgeURL, "--judge-model", "test-judge", "--judge-key-env", "none", "--max-attempts", "2"],
    // The operator's secret key, which seals the keys tenants store for judge endpoints.
    { cwd: dir, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, SCOREKIT_SECRET_KEY: randomBytes(32).toString("base64") } },
  );
  const exited = new Promise<number | null>((ok) => child.on("exit", (code) => ok(code)));
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`scorekit serve did not say where it listens within 60 s:\n${stderr}`)), 60_000);
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const m = /serving on (http:\/\/[0-9.]+:[0-9]+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        ok(m[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`scorekit serve exited with ${code} before serving:\n${stderr}`));
    });
  });

  const stop = async () => {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    await new Promise<void>((ok) => judge.close(() => ok()));
    rmSync(dir, { recursive: true, force: true });
  };
  return { url, key, judgeUrl: judgeURL, log: () => stderr, judgeAuth: () => [...auth], cli, stop };
}

/**
 * useService starts a service before the file's tests and stops it after them; the fields
 * are set once the tests run. `client` holds the key of tenant `acme`.
 */
export function useService(): { svc: Service; client: ScorekitClient } {
  const ctx = {} as { svc: Service; client: ScorekitClient };
  before(async () => {
    ctx.svc = await startService();
    ctx.client = new ScorekitClient({ baseUrl: ctx.svc.url, apiKey: ctx.svc.key });
  });
  after(async () => {
    await ctx.svc?.stop();
  });
  return ctx;
}
