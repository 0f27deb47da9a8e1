'use strict';
// The live test's app: the calendar agent's three turns (../../common/turns.cjs) against an
// OpenAI-compatible server, traced by real libraries and exported through the OpenTelemetry
// SDK's OTLP/HTTP exporters to the endpoint the standard environment variables name (a
// scorekit serve, with the tenant's ingest key). README.md, "The live app", says how to run
// it and what it prints.
//
//   ai-sdk       the AI SDK (ai 6): generateText with the OpenAI-compatible provider, a tool
//                and experimental_telemetry; traces only
//   otel-openai  @opentelemetry/instrumentation-openai 0.21 on the openai client, the tool
//                loop written out, each turn under a span of the app's own; message content
//                captured, so it goes to log records (OTLP logs)
//
//   node live.cjs [ai-sdk] [otel-openai]      (default: both, in that order)

const { setup } = require('./otel-setup.cjs');
const { AGENT, TOOL, TURNS } = require('../../common/turns.cjs');

const LIBRARIES = ['ai-sdk', 'otel-openai'];
const ENCODINGS = { 'http/json': 'json', 'http/protobuf': 'protobuf' };

function fail(msg) {
  process.stderr.write(`live: ${msg}\n`);
  process.exit(2);
}

const env = (name) => process.env[name] || '';
const libraries = process.argv.slice(2);
for (const l of libraries) if (!LIBRARIES.includes(l)) fail(`unknown library ${l}: want ${LIBRARIES.join(' and/or ')}`);
if (libraries.length === 0) libraries.push(...LIBRARIES);
const withLogs = libraries.includes('otel-openai');

// What the exporters need, checked before anything runs: an endpoint and a key for each
// signal sent, and an encoding this app can send.
if (!env('OPENAI_BASE_URL')) fail('OPENAI_BASE_URL is not set: the OpenAI-compatible server to call, e.g. the URL common/openai-server.cjs prints');
const signals = withLogs ? ['TRACES', 'LOGS'] : ['TRACES'];
const encoding = {};
for (const s of signals) {
  if (!env('OTEL_EXPORTER_OTLP_ENDPOINT') && !env(`OTEL_EXPORTER_OTLP_${s}_ENDPOINT`)) {
    fail(`OTEL_EXPORTER_OTLP_ENDPOINT is not set (nor OTEL_EXPORTER_OTLP_${s}_ENDPOINT): the OTLP/HTTP endpoint, e.g. http://127.0.0.1:8080 for a scorekit serve`);
  }
  if (!env('OTEL_EXPORTER_OTLP_HEADERS') && !env(`OTEL_EXPORTER_OTLP_${s}_HEADERS`)) {
    fail(`OTEL_EXPORTER_OTLP_HEADERS is not set (nor OTEL_EXPORTER_OTLP_${s}_HEADERS): the ingest key, Authorization=Bearer%20sk_...`);
  }
  const p = env(`OTEL_EXPORTER_OTLP_${s}_PROTOCOL`) || env('OTEL_EXPORTER_OTLP_PROTOCOL') || 'http/protobuf';
  if (!ENCODINGS[p]) fail(`OTLP protocol ${p}: this app sends http/json or http/protobuf`);
  encoding[s] = ENCODINGS[p];
}

const otel = setup({
  serviceName: env('OTEL_SERVICE_NAME') || AGENT,
  traces: [encoding.TRACES],
  logs: withLogs ? [encoding.LOGS] : [],
});
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { OpenAIInstrumentation } = require('@opentelemetry/instrumentation-openai');
registerInstrumentations({ instrumentations: [new OpenAIInstrumentation({ captureMessageContent: true })] });

const { trace } = require('@opentelemetry/api');
const OpenAI = require('openai'); // after the instrumentation, which patches it as it loads
const { runTurn: runOpenAITurn } = require('../../common/calendar-openai.cjs');
const { provider, runTurn: runAISDKTurn } = require('./calendar-ai-sdk.cjs');

const hex = (span) => span.spanContext();
const started = (span) => span.startTime[0] * 1e9 + span.startTime[1];

// report prints one turn: the span that makes its run under issue 31's rules (the AI
// SDK's ai.generateText span; for a trace of model calls only, the turn's first model
// call) and the run id that follows, TRACEID-SPANID.
function report(library, turn, answer, span) {
  const { traceId, spanId } = hex(span);
  const line = { library, turn: turn.name, user: turn.user, answer, trace_id: traceId, span_id: spanId, span_name: span.name, run_id: `${traceId}-${spanId}` };
  process.stdout.write(JSON.stringify(line) + '\n');
  if (answer !== turn.answer) throw new Error(`${library} turn ${turn.name}: answered ${JSON.stringify(answer)}, want ${JSON.stringify(turn.answer)}`);
}

async function aiSDK() {
  const openai = provider(env('OPENAI_BASE_URL'));
  for (const turn of TURNS) {
    const from = otel.ended.length;
    const answer = await runAISDKTurn(openai, turn.user, turn.toolResult);
    const span = otel.ended.slice(from).find((s) => s.name === 'ai.generateText');
    if (!span) throw new Error(`ai-sdk turn ${turn.name}: no ai.generateText span ended`);
    report('ai-sdk', turn, answer, span);
  }
}

async function otelOpenAI() {
  const client = new OpenAI({ baseURL: env('OPENAI_BASE_URL'), apiKey: env('OPENAI_API_KEY') || 'fake-key' });
  const tracer = trace.getTracer('calendar-app');
  for (const turn of TURNS) {
    let traceId;
    const answer = await tracer.startActiveSpan('calendar turn', async (span) => {
      traceId = span.spanContext().traceId;
      try {
        return await runOpenAITurn(client, turn.user, async (name) => {
          if (name !== TOOL.name) throw new Error(`unknown tool ${name}`);
          return turn.toolResult;
        });
      } finally {
        span.end();
      }
    });
    const calls = otel.ended.filter((s) => s.spanContext().traceId === traceId && s.name.startsWith('chat '));
    if (calls.length === 0) throw new Error(`otel-openai turn ${turn.name}: no chat span ended`);
    calls.sort((a, b) => started(a) - started(b));
    report('otel-openai', turn, answer, calls[0]);
  }
}

async function main() {
  if (libraries.includes('ai-sdk')) await aiSDK();
  if (libraries.includes('otel-openai')) await otelOpenAI();
  await otel.shutdown();
  process.stdout.write(JSON.stringify({ done: true, spans: otel.exported.traces, log_records: otel.exported.logs }) + '\n');
}

main().catch((e) => {
  process.stderr.write(`live: ${e.stack || e}\n`);
  process.exit(1);
});
