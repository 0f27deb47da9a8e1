'use strict';
// Capture: OpenInference (@arizeai/openinference-instrumentation-openai) on the openai
// client, the tool loop written out, exported as OTLP/HTTP JSON to OTLP_CAPTURE_URL.
//
//   FAKE_OPENAI_URL=... OTLP_CAPTURE_URL=http://127.0.0.1:PORT/openinference node capture-openinference.cjs
//       the instrumented client alone, each turn under a plain span of the app's own (a
//       request handler's): LLM spans only
//   ... OTLP_CAPTURE_URL=http://127.0.0.1:PORT/openinference-agent node capture-openinference.cjs --agent
//       as OpenInference's own helpers (@arizeai/openinference-core) have an app mark its
//       agent and tool: traceAgent around the turn, traceTool around cancel_event, so
//       each turn is an AGENT span with the LLM and TOOL spans below it

const { setup, need } = require('./otel-setup.cjs');
const { AGENT, TURNS, TOOL } = require('../../common/turns.cjs');
const { runTurn, check } = require('../../common/calendar-openai.cjs');

const baseURL = need('FAKE_OPENAI_URL', 'the fake OpenAI server (common/openai-server.cjs) prints it');
const url = need('OTLP_CAPTURE_URL', 'the receiver URL with the capture name, e.g. http://127.0.0.1:4318/openinference');
const agentMode = process.argv.includes('--agent');

const otel = setup({ serviceName: AGENT, traces: ['json'], url });
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { OpenAIInstrumentation } = require('@arizeai/openinference-instrumentation-openai');
registerInstrumentations({ instrumentations: [new OpenAIInstrumentation()] });

const { trace } = require('@opentelemetry/api');
const { traceAgent, traceTool } = require('@arizeai/openinference-core');
const OpenAI = require('openai'); // after the instrumentation, which patches it as it loads

async function main() {
  const client = new OpenAI({ baseURL, apiKey: 'fake-key' });
  const tracer = trace.getTracer('calendar-app');
  for (const turn of TURNS) {
    const cancelEvent = async ({ time }) => {
      if (typeof time !== 'string') throw new Error('cancel_event: no time');
      return turn.toolResult;
    };
    const runTool = async (name, args) => {
      if (name !== TOOL.name) throw new Error(`unknown tool ${name}`);
      return agentMode ? traceTool(cancelEvent, { name: TOOL.name })(args) : cancelEvent(args);
    };
    let answer;
    if (agentMode) {
      answer = await traceAgent((user) => runTurn(client, user, runTool), { name: AGENT })(turn.user);
    } else {
      answer = await tracer.startActiveSpan('calendar turn', async (span) => {
        try {
          return await runTurn(client, turn.user, runTool);
        } finally {
          span.end();
        }
      });
    }
    check(turn, answer);
  }
  await otel.shutdown();
}

main().catch((e) => {
  process.stderr.write(`capture-openinference: ${e.stack || e}\n`);
  process.exit(1);
});
