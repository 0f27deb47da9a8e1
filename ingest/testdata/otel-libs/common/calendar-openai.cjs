'use strict';
// The calendar agent written out on the openai client, as an app does without an agent
// framework: the model is called with the conversation and the cancel_event tool, each
// tool call it asks for is run and answered with a tool message, until it answers.

const { INSTRUCTIONS, MODEL, TOOL } = require('./turns.cjs');

// runTurn runs one turn of the conversation and returns the model's last answer ('' when
// it ended without text). runTool(name, args) runs a tool and returns its result.
async function runTurn(client, user, runTool) {
  const messages = [
    { role: 'system', content: INSTRUCTIONS },
    { role: 'user', content: user },
  ];
  const tools = [{ type: 'function', function: TOOL }];
  for (let round = 1; round <= 4; round++) {
    const completion = await client.chat.completions.create({ model: MODEL, messages, tools });
    const message = completion.choices[0].message;
    messages.push(message);
    if (!message.tool_calls || message.tool_calls.length === 0) return message.content || '';
    for (const call of message.tool_calls) {
      const result = await runTool(call.function.name, JSON.parse(call.function.arguments));
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
  throw new Error(`"${user}": the model still called tools after 4 rounds`);
}

// check stops the process when a turn's answer is not the one the fake server gives.
function check(turn, answer) {
  process.stdout.write(`turn ${turn.name}: ${JSON.stringify(answer)}\n`);
  if (answer !== turn.answer) {
    throw new Error(`turn ${turn.name}: answered ${JSON.stringify(answer)}, want ${JSON.stringify(turn.answer)}`);
  }
}

module.exports = { runTurn, check };
