// The README's example program, compiled by tsc with the tests, run against a real service.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { useService } from "./harness.js";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url)); // build/test
const pkg = join(here, "..", "..");

const service = useService();

test("the README shows examples/score.ts as it is", () => {
  const readme = readFileSync(join(pkg, "README.md"), "utf8");
  const example = readFileSync(join(pkg, "examples", "score.ts"), "utf8");
  assert.ok(readme.includes("```ts\n" + example + "```"), "README.md's first example differs from examples/score.ts: copy the file into the README");
});

test("the example program scores a run through the client", async () => {
  const { stdout } = await run(process.execPath, [join(here, "..", "examples", "score.js")], {
    env: { ...process.env, SCOREKIT_URL: service.svc.url, SCOREKIT_KEY: service.svc.key },
  });
  assert.match(stdout, /^scored (0\.[89]\d*|1) passed=true: /);
});

test("the example program reports a bad key by its code", async () => {
  await assert.rejects(
    run(process.execPath, [join(here, "..", "examples", "score.js")], { env: { ...process.env, SCOREKIT_URL: service.svc.url, SCOREKIT_KEY: "sk_wrong" } }),
    (err: { code?: number; stderr?: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr ?? "", /^unauthorized \(HTTP 401\): /);
      return true;
    },
  );
});
