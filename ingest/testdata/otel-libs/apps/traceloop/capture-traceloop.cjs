'use strict';
// Capture: OpenLLMetry (@traceloop/node-server-sdk): the SDK's own instrumentation of the
// openai client, each turn in withAgent, the tool in withTool, the tool loop written out.
//
//   FAKE_OPENAI_URL=... OTLP_CAPTURE_URL=http://127.0.0.1:PORT/traceloop node capture-traceloop.cjs
//       exported as OTLP/HTTP JSON: the SDK is given the OTel OTLP/HTTP JSON exporter
//   ... node capture-traceloop.cjs --protobuf
//       exported as the SDK does by default, OTLP/HTTP protobuf to its base URL
//       (baseUrl + /v1/traces, Authorization: Bearer API_KEY), the base URL being
//       OTLP_CAPTURE_URL: what a platform that sets TRACELOOP_BASE_URL sends

const { AGENT, TURNS, TOOL } = require('../../common/turns.cjs');
const { runTurn, check } = require('../../common/calendar-openai.cjs');

function need(name, hint) {
  const v = process.env[name];
  if (!v) {
    process.stderr.write(`${name} is not set: ${hint}\n`);
    process.exit(2);
  }
  return v;
}
const baseURL = need('FAKE_OPENAI_URL', 'the fake OpenAI server (common/openai-server.cjs) prints it');
const url = need('OTLP_CAPTURE_URL', 'the receiver URL with the capture name, e.g. http://127.0.0.1:4318/traceloop');
const protobuf = process.argv.includes('--protobuf');

const traceloop = require('@traceloop/node-server-sdk');
const failures = [];
let exporter;
if (!protobuf) {
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
  const inner = new OTLPTraceExporter({ url: `${url}/v1/traces` });
  // A failed export is remembered, so that the capture fails instead of losing spans.
  exporter = {
    export(spans, done) {
      inner.export(spans, (r) => {
        if (r.code !== 0) failures.push(r.error ? r.error.message : 'failed');
        done(r);
      });
    },
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
  };
}
traceloop.initialize({
  appName: AGENT,
  baseUrl: url,
  apiKey: 'fake-key',
  exporter,
  traceloopSyncEnabled: false,
  silenceInitializationMessage: true,
});
const OpenAI = require('openai'); // after initialize, whose instrumentation patches it as it loads

async function main() {
  const client = new OpenAI({ baseURL, apiKey: 'fake-key' });
  for (const turn of TURNS) {
    const cancelEvent = async ({ time }) => {
      if (typeof time !== 'string') throw new Error('cancel_event: no time');
      return turn.toolResult;
    };
    const answer = await traceloop.withAgent({ name: AGENT }, (user) =>
      runTurn(client, user, (name, args) => {
        if (name !== TOOL.name) throw new Error(`unknown tool ${name}`);
        return traceloop.withTool({ name: TOOL.name }, cancelEvent, args);
      }),
      turn.user,
    );
    check(turn, answer);
  }
  await traceloop.forceFlush();
  if (failures.length > 0) throw new Error(`export failed: ${failures.join('; ')}`);
}

main().catch((e) => {
  process.stderr.write(`capture-traceloop: ${e.stack || e}\n`);
  process.exit(1);
});
