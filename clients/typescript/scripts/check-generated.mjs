// Fails when src/openapi.ts is not what `npm run generate` makes from the service's
// OpenAPI document (openapi.json): the client's types must follow the API.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const committed = join(pkg, "src", "openapi.ts");
const tmp = mkdtempSync(join(tmpdir(), "scorekit-openapi-"));
try {
  const fresh = join(tmp, "openapi.ts");
  // The same command as `npm run generate`, written elsewhere.
  const script = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).scripts.generate;
  const args = script.split(/\s+/).slice(1).map((a) => (a === "src/openapi.ts" ? fresh : a));
  execFileSync(join(pkg, "node_modules", ".bin", "openapi-typescript"), args, { cwd: pkg, stdio: ["ignore", "ignore", "inherit"] });
  if (readFileSync(fresh, "utf8") !== readFileSync(committed, "utf8")) {
    console.error(
      "clients/typescript/src/openapi.ts is stale: openapi.json changed.\n" +
        "Regenerate it and commit: (cd clients/typescript && npm run generate), or make generate",
    );
    process.exit(1);
  }
  console.log("src/openapi.ts is fresh");
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
