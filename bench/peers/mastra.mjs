// Runs Mastra's code scorers (@mastra/evals) over a corpus of runs and writes, per scorer,
// the seconds the scoring loop took and one score per run, in the shape peers compare reads.
// Usage: node mastra.mjs RUNS.jsonl OUT.json [SCORER,...]   (with @mastra/evals installed in
// $MASTRA_DIR: run.sh installs it into its throwaway folder). Without a list, every scorer.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [runsPath, outPath, only] = process.argv.slice(2);
if (!runsPath || !outPath) {
  console.error('usage: node mastra.mjs RUNS.jsonl OUT.json [SCORER,...]');
  process.exit(2);
}
// Resolve the packages from the install folder (NODE_PATH is not honoured by ESM imports).
const require = createRequire(pathToFileURL(process.env.MASTRA_DIR + '/package.json'));
const load = (spec) => import(pathToFileURL(require.resolve(spec)).href);
const prebuilt = await load('@mastra/evals/scorers/prebuilt');
const utils = await load('@mastra/evals/scorers/utils');

const all = {
  completeness: () => prebuilt.createCompletenessScorer(),
  content_similarity: () => prebuilt.createContentSimilarityScorer(),
  keyword_coverage: () => prebuilt.createKeywordCoverageScorer(),
  textual_difference: () => prebuilt.createTextualDifferenceScorer(),
  tone: () => prebuilt.createToneScorer(),
};
const names = only ? only.split(',') : Object.keys(all);
const scorers = {};
for (const n of names) {
  if (!all[n]) {
    console.error(`unknown scorer ${n}; want one of ${Object.keys(all).join(', ')}`);
    process.exit(2);
  }
  scorers[n] = all[n]();
}

const lines = readFileSync(runsPath, 'utf8').split('\n').filter((l) => l.length > 0);
// Built before timing, as the Go side decodes its runs before timing.
const runs = lines.map((l) => {
  const r = JSON.parse(l);
  return utils.createAgentTestRun({
    inputMessages: [utils.createTestMessage({ content: r.input, role: 'user' })],
    output: [utils.createTestMessage({ content: r.output, role: 'assistant' })],
  });
});

const WARMUP = 1000; // as the Go side: past V8's optimizing tiers
const MIN_SECONDS = 1;
const out = { side: 'Mastra @mastra/evals ' + JSON.parse(readFileSync(require.resolve('@mastra/evals/package.json'), 'utf8')).version, scorers: {} };
for (const [name, scorer] of Object.entries(scorers)) {
  for (const run of runs.slice(0, WARMUP)) {
    try { await scorer.run(run); } catch { /* counted in the timed loop */ }
  }
  const scores = new Array(runs.length).fill(null);
  // Whole passes until at least MIN_SECONDS, as the Go side; scores from the first.
  let passes = 0;
  const start = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  while (passes === 0 || Number(process.hrtime.bigint() - start) / 1e9 < MIN_SECONDS) {
    for (let i = 0; i < runs.length; i++) {
      try {
        const { score } = await scorer.run(runs[i]);
        if (passes === 0) scores[i] = Number.isFinite(score) ? score : null;
      } catch {
        if (passes === 0) scores[i] = null;
      }
    }
    passes++;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9 / passes;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6 / passes;
  out.scorers[name] = { seconds, cpu_seconds: cpuSeconds, passes, scores };
  console.error(`${out.side} ${name.padEnd(20)} ${(runs.length / seconds).toFixed(0).padStart(8)} runs/s ${(runs.length / cpuSeconds).toFixed(0).padStart(8)} runs/cpu-s (${passes} passes)`);
}
writeFileSync(outPath, JSON.stringify(out));
