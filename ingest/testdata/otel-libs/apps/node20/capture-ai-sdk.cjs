'use strict';
// Capture: the AI SDK (ai 6) with its OpenAI-compatible provider, generateText with a tool
// and experimental_telemetry, exported as OTLP/HTTP JSON to OTLP_CAPTURE_URL.
//
//   FAKE_OPENAI_URL=http://127.0.0.1:PORT/v1 OTLP_CAPTURE_URL=http://127.0.0.1:PORT/ai-sdk \
//   node capture-ai-sdk.cjs

const { setup, need } = require('./otel-setup.cjs');
const { AGENT, TURNS } = require('../../common/turns.cjs');
const { check } = require('../../common/calendar-openai.cjs');
const { provider, runTurn } = require('./calendar-ai-sdk.cjs');

const baseURL = need('FAKE_OPENAI_URL', 'the fake OpenAI server (common/openai-server.cjs) prints it');
const url = need('OTLP_CAPTURE_URL', 'the receiver URL with the capture name, e.g. http://127.0.0.1:4318/ai-sdk');

async function main() {
  const otel = setup({ serviceName: AGENT, traces: ['json'], url });
  const openai = provider(baseURL);
  for (const turn of TURNS) check(turn, await runTurn(openai, turn.user, turn.toolResult));
  await otel.shutdown();
}

main().catch((e) => {
  process.stderr.write(`capture-ai-sdk: ${e.stack || e}\n`);
  process.exit(1);
});
