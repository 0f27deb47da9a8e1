'use strict';
// The calendar agent on the AI SDK: generateText with the OpenAI-compatible provider, the
// cancel_event tool and telemetry on (experimental_telemetry), which the AI SDK records
// with the global tracer provider.

const { createOpenAICompatible } = require('@ai-sdk/openai-compatible');
const { generateText, stepCountIs, tool } = require('ai');
const { z } = require('zod');
const { AGENT, INSTRUCTIONS, MODEL, TOOL } = require('../../common/turns.cjs');

function provider(baseURL) {
  return createOpenAICompatible({ name: 'fake-openai', baseURL, apiKey: 'fake-key' });
}

// runTurn runs one turn; the tool answers with toolResult.
async function runTurn(openai, user, toolResult) {
  const { text } = await generateText({
    model: openai.chatModel(MODEL),
    system: INSTRUCTIONS,
    prompt: user,
    tools: {
      [TOOL.name]: tool({
        description: TOOL.description,
        inputSchema: z.object({ time: z.string().describe(TOOL.parameters.properties.time.description) }),
        execute: async () => toolResult,
      }),
    },
    stopWhen: stepCountIs(4),
    experimental_telemetry: { isEnabled: true, functionId: AGENT },
  });
  return text;
}

module.exports = { provider, runTurn };
