'use strict';
// A fake OpenAI-compatible server for the captures and the live test: no network, no
// state, the same answer for the same request. It serves
//
//   POST .../chat/completions   non-streaming, and streaming (SSE) when "stream" is true,
//                               with a usage chunk when stream_options.include_usage is
//   POST .../responses          the Responses API, non-streaming and streaming
//
// under any path prefix (/v1, /silent/v1, ...), and answers the three turns of turns.cjs
// from what the request holds (the last user message and the tool results after it). A
// request it has no answer for gets a 400 naming what it got, so a capture fails loudly.
//
// As a command it prints one line, FAKE_OPENAI_URL=http://127.0.0.1:PORT/v1, and serves
// until it is killed (SIGTERM or SIGINT); each request it answers is logged on stderr:
//
//   node openai-server.cjs [--port N]

const crypto = require('node:crypto');
const http = require('node:http');
const { TOOL } = require('./turns.cjs');

const CREATED = 1767225600; // a fixed time: 2026-01-01T00:00:00Z
const CALL_ID = 'call_cancel_event_1500';

// decide returns {text} or {toolCall: {id, name, arguments}} for a conversation given as
// {user, toolResults, tools}, or throws an Error saying why it has no answer.
function decide({ user, toolResults, tools }) {
  if (user === undefined) throw new Error('the request has no user message');
  if (/capital of France/i.test(user)) return { text: 'Paris.' };
  if (/cancel my 3\s*pm meeting/i.test(user)) {
    if (toolResults.length === 0) {
      if (!tools.includes(TOOL.name)) {
        throw new Error(`"${user}" needs the ${TOOL.name} tool; the request offers ${JSON.stringify(tools)}`);
      }
      return { toolCall: { id: CALL_ID, name: TOOL.name, arguments: JSON.stringify({ time: '15:00' }) } };
    }
    const last = toolResults[toolResults.length - 1];
    if (/"notified"\s*:\s*true/.test(last)) return { text: '' };
    if (/"cancelled"\s*:\s*true/.test(last)) return { text: 'Your 3pm meeting is cancelled.' };
    throw new Error(`no answer for the tool result ${JSON.stringify(last)}`);
  }
  throw new Error(`no answer for the user message ${JSON.stringify(user)}`);
}

// textOf reads a message's content: a string, or an array of parts with text.
function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (typeof p === 'string' ? p : p && typeof p.text === 'string' ? p.text : ''))
      .join('');
  }
  if (content && typeof content === 'object') return JSON.stringify(content);
  return '';
}

// chatConversation reads a chat completions request.
function chatConversation(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  let userAt = -1;
  messages.forEach((m, i) => {
    if (m.role === 'user') userAt = i;
  });
  return {
    user: userAt < 0 ? undefined : textOf(messages[userAt].content),
    toolResults: messages.slice(userAt + 1).filter((m) => m.role === 'tool').map((m) => textOf(m.content)),
    tools: (body.tools || []).map((t) => (t.function ? t.function.name : t.name)),
  };
}

// responsesConversation reads a Responses API request.
function responsesConversation(body) {
  let items = body.input;
  if (typeof items === 'string') items = [{ role: 'user', content: items }];
  if (!Array.isArray(items)) items = [];
  let userAt = -1;
  items.forEach((it, i) => {
    if (it.role === 'user' && (it.type === undefined || it.type === 'message')) userAt = i;
  });
  return {
    user: userAt < 0 ? undefined : textOf(items[userAt].content),
    toolResults: items
      .slice(userAt + 1)
      .filter((it) => it.type === 'function_call_output')
      .map((it) => textOf(it.output)),
    tools: (body.tools || []).map((t) => t.name || (t.function && t.function.name)),
  };
}

// tokens is a deterministic stand-in for a token count.
const tokens = (s) => Math.max(1, Math.ceil(Buffer.byteLength(s) / 4));

function idOf(prefix, raw) {
  return prefix + crypto.createHash('sha256').update(raw).digest('hex').slice(0, 24);
}

function chatCompletion(body, raw, answer) {
  const promptTokens = tokens(JSON.stringify(body.messages || []));
  const completionTokens = answer.toolCall ? tokens(answer.toolCall.arguments) + 4 : tokens(answer.text);
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  const message = { role: 'assistant', content: answer.toolCall ? null : answer.text, refusal: null };
  if (answer.toolCall) {
    const { id, name, arguments: args } = answer.toolCall;
    message.tool_calls = [{ id, type: 'function', function: { name, arguments: args } }];
  }
  return {
    id: idOf('chatcmpl-', raw),
    object: 'chat.completion',
    created: CREATED,
    model: body.model,
    system_fingerprint: 'fp_fake',
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.toolCall ? 'tool_calls' : 'stop' }],
    usage,
  };
}

// chatChunks is the same completion as the chunks of a stream.
function chatChunks(body, completion) {
  const base = { id: completion.id, object: 'chat.completion.chunk', created: CREATED, model: body.model, system_fingerprint: 'fp_fake' };
  const chunk = (delta, finish) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const msg = completion.choices[0].message;
  const out = [chunk({ role: 'assistant', content: '', refusal: null }, null)];
  if (msg.tool_calls) {
    const c = msg.tool_calls[0];
    out.push(chunk({ tool_calls: [{ index: 0, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] }, null));
    const args = c.function.arguments;
    const half = Math.floor(args.length / 2);
    for (const part of [args.slice(0, half), args.slice(half)]) {
      out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] }, null));
    }
  } else {
    for (const word of msg.content.match(/\S+\s*/g) || []) out.push(chunk({ content: word }, null));
  }
  out.push(chunk({}, completion.choices[0].finish_reason));
  if (body.stream_options && body.stream_options.include_usage) {
    out.push({ ...base, choices: [], usage: completion.usage });
  }
  return out;
}

function response(body, raw, answer) {
  const id = idOf('resp_', raw);
  const inputTokens = tokens(JSON.stringify(body.input || '') + (body.instructions || ''));
  let output;
  let outputTokens;
  if (answer.toolCall) {
    const { id: callId, name, arguments: args } = answer.toolCall;
    output = [{ type: 'function_call', id: idOf('fc_', raw), call_id: callId, name, arguments: args, status: 'completed' }];
    outputTokens = tokens(args) + 4;
  } else {
    output = [
      {
        type: 'message',
        id: idOf('msg_', raw),
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: answer.text, annotations: [] }],
      },
    ];
    outputTokens = tokens(answer.text);
  }
  return {
    id,
    object: 'response',
    created_at: CREATED,
    status: 'completed',
    error: null,
    incomplete_details: null,
    instructions: body.instructions || null,
    model: body.model,
    output,
    parallel_tool_calls: true,
    tool_choice: body.tool_choice || 'auto',
    tools: body.tools || [],
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
  };
}

// responseEvents is the same response as the events of a stream.
function responseEvents(resp) {
  let seq = 0;
  const ev = (type, fields) => ({ type, sequence_number: seq++, ...fields });
  const pending = { ...resp, status: 'in_progress', output: [], usage: null };
  const out = [ev('response.created', { response: pending }), ev('response.in_progress', { response: pending })];
  resp.output.forEach((item, i) => {
    if (item.type === 'function_call') {
      out.push(ev('response.output_item.added', { output_index: i, item: { ...item, arguments: '', status: 'in_progress' } }));
      out.push(ev('response.function_call_arguments.delta', { output_index: i, item_id: item.id, delta: item.arguments }));
      out.push(ev('response.function_call_arguments.done', { output_index: i, item_id: item.id, arguments: item.arguments }));
    } else {
      const text = item.content[0].text;
      out.push(ev('response.output_item.added', { output_index: i, item: { ...item, content: [], status: 'in_progress' } }));
      out.push(ev('response.content_part.added', { output_index: i, item_id: item.id, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }));
      for (const word of text.match(/\S+\s*/g) || []) {
        out.push(ev('response.output_text.delta', { output_index: i, item_id: item.id, content_index: 0, delta: word }));
      }
      out.push(ev('response.output_text.done', { output_index: i, item_id: item.id, content_index: 0, text }));
      out.push(ev('response.content_part.done', { output_index: i, item_id: item.id, content_index: 0, part: item.content[0] }));
    }
    out.push(ev('response.output_item.done', { output_index: i, item }));
  });
  out.push(ev('response.completed', { response: resp }));
  return out;
}

function sendJSON(res, status, value) {
  const b = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) });
  res.end(b);
}

function sendSSE(res, events, done) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const e of events) {
    if (e.type && e.sequence_number !== undefined) res.write(`event: ${e.type}\n`);
    res.write(`data: ${JSON.stringify(e)}\n\n`);
  }
  if (done) res.write('data: [DONE]\n\n');
  res.end();
}

function handle(req, raw, res, log) {
  const path = req.url.split('?')[0];
  if (req.method !== 'POST') return sendJSON(res, 404, { error: { message: `${req.method} ${path}: the fake OpenAI server serves POST .../chat/completions and POST .../responses`, type: 'invalid_request_error' } });
  let body;
  try {
    body = JSON.parse(raw);
  } catch (e) {
    return sendJSON(res, 400, { error: { message: `the body is not JSON: ${e.message}`, type: 'invalid_request_error' } });
  }
  const chat = path.endsWith('/chat/completions');
  if (!chat && !path.endsWith('/responses')) {
    return sendJSON(res, 404, { error: { message: `POST ${path}: the fake OpenAI server serves .../chat/completions and .../responses`, type: 'invalid_request_error' } });
  }
  let answer;
  try {
    answer = decide(chat ? chatConversation(body) : responsesConversation(body));
  } catch (e) {
    log(`fake openai: 400 ${path}: ${e.message}`);
    return sendJSON(res, 400, { error: { message: `fake OpenAI server: ${e.message}`, type: 'invalid_request_error' } });
  }
  log(`fake openai: ${path}${body.stream ? ' (stream)' : ''} -> ${answer.toolCall ? `tool call ${answer.toolCall.name}` : JSON.stringify(answer.text)}`);
  if (chat) {
    const completion = chatCompletion(body, raw, answer);
    return body.stream ? sendSSE(res, chatChunks(body, completion), true) : sendJSON(res, 200, completion);
  }
  const resp = response(body, raw, answer);
  return body.stream ? sendSSE(res, responseEvents(resp), false) : sendJSON(res, 200, resp);
}

// start listens on 127.0.0.1 (port 0: any free port) and resolves to {server, url}, url
// being the base URL an OpenAI client takes (ending in /v1).
function start({ port = 0, log = () => {} } = {}) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, Buffer.concat(chunks).toString('utf8'), res, log);
      } catch (e) {
        log(`fake openai: 500: ${e.stack}`);
        sendJSON(res, 500, { error: { message: `fake OpenAI server: ${e.message}`, type: 'server_error' } });
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/v1` }));
  });
}

module.exports = { start, decide };

if (require.main === module) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : 0;
  start({ port, log: (s) => process.stderr.write(s + '\n') }).then(
    ({ server, url }) => {
      process.stdout.write(`FAKE_OPENAI_URL=${url}\n`);
      const stop = () => server.close(() => process.exit(0));
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    },
    (e) => {
      process.stderr.write(`fake openai: cannot listen: ${e.message}\n`);
      process.exit(1);
    },
  );
}
