'use strict';
// The calendar agent every capture traces: its instructions, its one tool and the three
// turns. The fake OpenAI server (openai-server.cjs) answers from what a request holds:
//
//   capital        "What is the capital of France?"  -> "Paris."
//   cancel         "Cancel my 3pm meeting"           -> cancel_event({"time":"15:00"}),
//                  then, given the tool's result {"cancelled":true}
//                                                    -> "Your 3pm meeting is cancelled."
//   cancel-silent  "Cancel my 3pm meeting"           -> cancel_event({"time":"15:00"}),
//                  then, given {"cancelled":true,"notified":true} (the calendar has told
//                  the user itself)                  -> no text at all (finish "stop")
//
// The tool's result is the only thing that tells the two cancel turns apart, so each
// capture's cancel_event returns the TURNS entry's toolResult for the turn it runs.

const AGENT = 'calendar-agent';
const MODEL = 'gpt-4o-mini';
const INSTRUCTIONS = "You are a calendar assistant. Use the tools to change the user's calendar.";

const TOOL = {
  name: 'cancel_event',
  description: 'Cancel the meeting that starts at the given time today.',
  parameters: {
    type: 'object',
    properties: { time: { type: 'string', description: 'start time, HH:MM (24-hour clock)' } },
    required: ['time'],
    additionalProperties: false,
  },
};

const TURNS = [
  { name: 'capital', user: 'What is the capital of France?', answer: 'Paris.' },
  {
    name: 'cancel',
    user: 'Cancel my 3pm meeting',
    toolResult: { cancelled: true },
    answer: 'Your 3pm meeting is cancelled.',
  },
  { name: 'cancel-silent', user: 'Cancel my 3pm meeting', toolResult: { cancelled: true, notified: true }, answer: '' },
];

module.exports = { AGENT, MODEL, INSTRUCTIONS, TOOL, TURNS };
