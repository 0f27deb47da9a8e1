// Capture: a Mastra agent (@mastra/core) with the cancel_event tool, its model the fake
// OpenAI server as an OpenAI-compatible endpoint, traced by Mastra's observability and
// exported by @mastra/otel-exporter as OTLP/HTTP JSON to OTLP_CAPTURE_URL (the custom
// provider: traces to .../v1/traces, Mastra's log records to .../v1/logs).
//
// Mastra needs Node 22.13 or later; this folder's lockfile pins Node 22 itself (the npm
// package "node"), so run it with that:
//
//   FAKE_OPENAI_URL=http://127.0.0.1:PORT/v1 OTLP_CAPTURE_URL=http://127.0.0.1:PORT/mastra \
//   MASTRA_TELEMETRY_DISABLED=1 node_modules/.bin/node capture-mastra.mjs

import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { z } from 'zod';
import turns from '../../common/turns.cjs';
import calendar from '../../common/calendar-openai.cjs';

const { AGENT, INSTRUCTIONS, MODEL, TOOL, TURNS } = turns;

function need(name, hint) {
  const v = process.env[name];
  if (!v) {
    process.stderr.write(`${name} is not set: ${hint}\n`);
    process.exit(2);
  }
  return v;
}
const baseURL = need('FAKE_OPENAI_URL', 'the fake OpenAI server (common/openai-server.cjs) prints it');
const url = need('OTLP_CAPTURE_URL', 'the receiver URL with the capture name, e.g. http://127.0.0.1:4318/mastra');
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  process.stderr.write(`Mastra needs Node 22.13 or later, this is ${process.version}: run node_modules/.bin/node capture-mastra.mjs\n`);
  process.exit(2);
}

let toolResult; // what cancel_event answers in the turn that runs
const cancelEvent = createTool({
  id: TOOL.name,
  description: TOOL.description,
  inputSchema: z.object({ time: z.string().describe(TOOL.parameters.properties.time.description) }),
  execute: async () => toolResult,
});

const exporter = new OtelExporter({ provider: { custom: { endpoint: url, protocol: 'http/json' } } });
const mastra = new Mastra({
  agents: {
    calendarAgent: new Agent({
      id: AGENT,
      name: AGENT,
      instructions: INSTRUCTIONS,
      model: { id: `openai/${MODEL}`, url: baseURL, apiKey: 'fake-key' },
      tools: { [TOOL.name]: cancelEvent },
    }),
  },
  observability: new Observability({ configs: { otel: { serviceName: AGENT, exporters: [exporter] } } }),
});

try {
  const agent = mastra.getAgent('calendarAgent');
  for (const turn of TURNS) {
    toolResult = turn.toolResult;
    const result = await agent.generate(turn.user, { maxSteps: 4 });
    calendar.check(turn, result.text);
  }
  await mastra.shutdown();
} catch (e) {
  process.stderr.write(`capture-mastra: ${e.stack || e}\n`);
  process.exit(1);
}
