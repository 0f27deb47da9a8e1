'use strict';
// Regenerates the golden OTLP exports: starts the fake OpenAI server and the OTLP receiver
// on 127.0.0.1, runs each library's capture script against them, checks that each capture
// holds the three turns, and only then replaces the goldens (NAME/traces.jsonl,
// NAME/logs.jsonl, NAME/protobuf/*.pb; each folder's README.md stays). Nothing leaves the
// machine. ../capture.sh installs the apps' dependencies first (npm ci) and runs this.
//
//   node common/capture-all.cjs [NAME...]     (default: every capture)
//
// The Node 20 apps run on the node running this script (the machine's); Mastra runs on the
// Node 22 its own lockfile installs (apps/mastra/node_modules/.bin/node).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const fake = require('./openai-server.cjs');
const receiver = require('./receiver.cjs');

const ROOT = path.resolve(__dirname, '..');
const APPS = path.join(ROOT, 'apps');
const NODE20 = process.execPath;
const NODE22 = path.join(APPS, 'mastra', 'node_modules', '.bin', 'node');

// Each capture: the golden folder it fills (name), and the runs that fill it, each a
// command in an app's folder with extra environment.
const CAPTURES = [
  {
    name: 'otel-openai',
    runs: [
      {
        app: 'node20',
        cmd: [NODE20, 'capture-otel-openai.cjs'],
        env: { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' },
      },
    ],
    want: ['traces.jsonl', 'logs.jsonl', 'protobuf/traces-001.pb', 'protobuf/logs-001.pb'],
  },
  { name: 'ai-sdk', runs: [{ app: 'node20', cmd: [NODE20, 'capture-ai-sdk.cjs'] }], want: ['traces.jsonl'] },
  { name: 'openinference', runs: [{ app: 'node20', cmd: [NODE20, 'capture-openinference.cjs'] }], want: ['traces.jsonl'] },
  {
    name: 'openinference-agent',
    runs: [{ app: 'node20', cmd: [NODE20, 'capture-openinference.cjs', '--agent'] }],
    want: ['traces.jsonl'],
  },
  {
    name: 'traceloop',
    runs: [
      { app: 'traceloop', cmd: [NODE20, 'capture-traceloop.cjs'] },
      { app: 'traceloop', cmd: [NODE20, 'capture-traceloop.cjs', '--protobuf'] },
    ],
    want: ['traces.jsonl', 'protobuf/traces-001.pb'],
  },
  {
    name: 'mastra',
    runs: [{ app: 'mastra', cmd: [NODE22, 'capture-mastra.mjs'], env: { MASTRA_TELEMETRY_DISABLED: '1' } }],
    want: ['traces.jsonl'],
  },
];

// What every capture must hold, in its JSON files and, separately, in its protobuf files:
// the three turns' question, answer, tool call, arguments and both tool results.
const MUST_HOLD = ['capital of France', 'Paris', 'Cancel my 3pm meeting', 'cancel_event', '15:00', 'Your 3pm meeting is cancelled.', 'notified'];

function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: 'inherit', ...opts });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} (in ${opts.cwd}): exit ${code ?? signal}`)),
    );
  });
}

function filesUnder(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true }).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort();
}

// check returns what a captured folder lacks, as messages.
function check(capture, dir) {
  const problems = [];
  const files = filesUnder(dir);
  for (const w of capture.want) if (!files.includes(w)) problems.push(`no ${w}`);
  for (const [kind, match] of [
    ['JSON', (f) => f.endsWith('.jsonl')],
    ['protobuf', (f) => f.endsWith('.pb')],
  ]) {
    const some = files.filter(match);
    if (some.length === 0) continue;
    const all = Buffer.concat(some.map((f) => fs.readFileSync(path.join(dir, f)))).toString('latin1');
    for (const s of MUST_HOLD) if (!all.includes(s)) problems.push(`its ${kind} files do not hold "${s}"`);
  }
  return problems;
}

async function main() {
  const only = process.argv.slice(2);
  for (const n of only) {
    if (!CAPTURES.some((c) => c.name === n)) throw new Error(`no capture ${n}: the captures are ${CAPTURES.map((c) => c.name).join(', ')}`);
  }
  const captures = only.length > 0 ? CAPTURES.filter((c) => only.includes(c.name)) : CAPTURES;
  for (const c of captures) {
    for (const r of c.runs) {
      if (r.cmd[0] === NODE22 && !fs.existsSync(NODE22)) {
        throw new Error(`${NODE22} is missing: install apps/mastra first (cd apps/mastra && npm ci)`);
      }
      if (!fs.existsSync(path.join(APPS, r.app, 'node_modules'))) {
        throw new Error(`apps/${r.app}/node_modules is missing: cd apps/${r.app} && npm ci (capture.sh does)`);
      }
    }
  }
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'otel-libs-'));
  const log = (s) => process.stderr.write(s + '\n');
  const api = await fake.start({ log });
  const otlp = await receiver.start({ dir: out, log });
  log(`capture: fake OpenAI server ${api.url}, OTLP receiver ${otlp.url}, into ${out}`);
  try {
    for (const c of captures) {
      for (const r of c.runs) {
        const cwd = path.join(APPS, r.app);
        log(`\ncapture ${c.name}: ${r.cmd[0] === NODE22 ? 'node_modules/.bin/node' : `node (${process.version})`} ${r.cmd.slice(1).join(' ')} (apps/${r.app})`);
        await run(r.cmd[0], r.cmd.slice(1), {
          cwd,
          env: { ...process.env, ...r.env, FAKE_OPENAI_URL: api.url, OTLP_CAPTURE_URL: `${otlp.url}/${c.name}` },
        });
      }
    }
    const problems = captures.flatMap((c) => check(c, path.join(out, c.name)).map((p) => `${c.name}: ${p}`));
    if (problems.length > 0) throw new Error(`the captures are not complete (kept in ${out}):\n  ${problems.join('\n  ')}`);
    for (const c of captures) {
      const golden = path.join(ROOT, c.name);
      fs.mkdirSync(golden, { recursive: true });
      for (const f of ['traces.jsonl', 'logs.jsonl', 'protobuf']) fs.rmSync(path.join(golden, f), { recursive: true, force: true });
      for (const f of filesUnder(path.join(out, c.name))) {
        fs.mkdirSync(path.dirname(path.join(golden, f)), { recursive: true });
        fs.copyFileSync(path.join(out, c.name, f), path.join(golden, f));
        log(`wrote ${path.relative(ROOT, path.join(golden, f))} (${fs.statSync(path.join(golden, f)).size} bytes)`);
      }
    }
    fs.rmSync(out, { recursive: true, force: true });
  } finally {
    api.server.close();
    otlp.server.close();
  }
}

main().catch((e) => {
  process.stderr.write(`capture: ${e.message}\n`);
  process.exit(1);
});
