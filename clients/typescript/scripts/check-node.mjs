// Fails when this Node.js is older than the package's "engines" (">=20"): the one Node.js
// version the repository asks for, checked here for `npm test` and by `make test` before
// anything is built (mk/tools.sh). npm itself only warns about engines.
//
//   node scripts/check-node.mjs [PACKAGE_JSON]   (default: this package's package.json)
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const file = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), "..", "package.json");
const range = JSON.parse(readFileSync(file, "utf8")).engines?.node ?? "";
const m = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
if (!m) {
  console.error(`${file}: engines.node is ${JSON.stringify(range)}; want ">=MAJOR[.MINOR[.PATCH]]"`);
  process.exit(1);
}
const want = m.slice(1).map((v) => Number(v ?? 0));
const have = process.versions.node.split(".").map(Number);
// The first part that differs decides (20.9 is older than 20.10).
let older = false;
for (let i = 0; i < want.length; i++) {
  if ((have[i] ?? 0) !== want[i]) {
    older = (have[i] ?? 0) < want[i];
    break;
  }
}
if (older) {
  console.error(
    `@scorekit/client needs Node.js ${range.replace(/^>=\s*/, "")} or later (package.json "engines"); this is ${process.versions.node}.\n` +
      "Install a newer one from https://nodejs.org/en/download (NodeSource's nodejs package or nvm on Debian and Ubuntu).",
  );
  process.exit(1);
}
