'use strict';
// Capture: @opentelemetry/instrumentation-openai (the OpenTelemetry project's own) on the
// openai client, the tool loop written out, message content captured
// (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true), so content goes to log
// records through the LoggerProvider. Each turn runs under a plain span of the app's own
// (a request handler's), so its model calls share a trace. Spans and log records are
// exported twice, as OTLP/HTTP JSON and as protobuf, to OTLP_CAPTURE_URL.
//
//   FAKE_OPENAI_URL=http://127.0.0.1:PORT/v1 OTLP_CAPTURE_URL=http://127.0.0.1:PORT/otel-openai \
//   OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true node capture-otel-openai.cjs

const { setup, need } = require('./otel-setup.cjs');
const { AGENT, TURNS } = require('../../common/turns.cjs');
const { runTurn, check } = require('../../common/calendar-openai.cjs');

const baseURL = need('FAKE_OPENAI_URL', 'the fake OpenAI server (common/openai-server.cjs) prints it');
const url = need('OTLP_CAPTURE_URL', 'the receiver URL with the capture name, e.g. http://127.0.0.1:4318/otel-openai');
if (process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT !== 'true') {
  process.stderr.write('OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT must be true: the capture is of message content\n');
  process.exit(2);
}

const otel = setup({ serviceName: AGENT, traces: ['json', 'protobuf'], logs: ['json', 'protobuf'], url });
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { OpenAIInstrumentation } = require('@opentelemetry/instrumentation-openai');
registerInstrumentations({ instrumentations: [new OpenAIInstrumentation()] });

const { trace } = require('@opentelemetry/api');
const OpenAI = require('openai'); // after the instrumentation, which patches it as it loads

async function main() {
  const client = new OpenAI({ baseURL, apiKey: 'fake-key' });
  const tracer = trace.getTracer('calendar-app');
  for (const turn of TURNS) {
    const answer = await tracer.startActiveSpan('calendar turn', async (span) => {
      try {
        return await runTurn(client, turn.user, async (name, args) => {
          if (name !== 'cancel_event') throw new Error(`unknown tool ${name}`);
          return turn.toolResult;
        });
      } finally {
        span.end();
      }
    });
    check(turn, answer);
  }
  await otel.shutdown();
}

main().catch((e) => {
  process.stderr.write(`capture-otel-openai: ${e.stack || e}\n`);
  process.exit(1);
});
