#!/usr/bin/env node
// A scorekit process plugin in Node.js. The host (host/process) starts this file, pinned by
// sha256 in its manifest, and talks to it as to any go-plugin plugin:
//
//   1. the host sets SCOREKIT_PLUGIN (the magic cookie) and PLUGIN_PROTOCOL_VERSIONS;
//   2. the plugin serves gRPC and prints the handshake line on stdout:
//        CORE-VERSION|APP-VERSION|NETWORK|ADDRESS|grpc
//   3. the host checks grpc.health.v1 for service "plugin", then calls the Scorer service of
//      proto/scorekit/plugin/v1/plugin.proto, whose messages carry scorekit's JSON contract
//      (schemas/) as bytes: Info, Configure, and Score calls on the Session stream (this
//      plugin offers it), on which a scorer's judge requests and the host's answers travel
//      too; a host that makes unary Score calls passes the GRPCBroker id of the Judge
//      service it serves instead, whose address comes on go-plugin's broker stream;
//   4. on close the host calls plugin.GRPCController/Shutdown and the plugin exits.
//
// Logs go to stderr as JSON lines ({"@level", "@message", fields}); the host forwards them
// to its structured logger with their level and fields.
//
// The judge is the host's: node_answers_question asks it through the host, which holds the
// key, the budget and the cache; the plugin has no network. Setup: npm ci (or make -C ../..
// node-scorer). Not supported: AutoMTLS.
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const COOKIE_KEY = 'SCOREKIT_PLUGIN';
const COOKIE_VALUE = '7c1b4a0e-scorer';
const CORE_PROTOCOL_VERSION = 1; // go-plugin's
const APP_PROTOCOL_VERSION = 1; // scorekit's process protocol (pluginrpc.ProtocolVersion)
const ABI_VERSION = 1; // sdk.ABIVersion

function log(level, message, fields) {
  process.stderr.write(JSON.stringify({ '@level': level, '@message': message, '@timestamp': new Date().toISOString(), ...fields }) + '\n');
}

if (process.env[COOKIE_KEY] !== COOKIE_VALUE) {
  process.stderr.write('This program is a scorekit plugin: the scorekit host starts it. It is not meant to be run by hand.\n');
  process.exit(1);
}
const offered = (process.env.PLUGIN_PROTOCOL_VERSIONS || String(APP_PROTOCOL_VERSION)).split(',').map(Number);
if (!offered.includes(APP_PROTOCOL_VERSION)) {
  // Answer with our version anyway: the host refuses it with a message naming both.
  log('warn', 'host does not offer our protocol version', { offered, ours: APP_PROTOCOL_VERSION });
}

const here = __dirname;
const load = (file, dirs) => grpc.loadPackageDefinition(protoLoader.loadSync(file, {
  includeDirs: dirs, keepCase: true, longs: Number, defaults: true, oneofs: true,
}));
const pb = load('scorekit/plugin/v1/plugin.proto', [path.join(here, '..', '..', 'proto')]).scorekit.plugin.v1;
const health = load('health.proto', [path.join(here, 'proto')]).grpc.health.v1;
const controller = load('controller.proto', [path.join(here, 'proto')]).plugin;
const brokerPb = load('grpc_broker.proto', [path.join(here, 'proto')]).plugin;

// The scorer: keyword recall of the reference answer. Which words of `expected` (longer
// than min_length characters, lower-cased) does the output contain?
const info = {
  name: 'node_keyword_recall',
  version: '0.1.0',
  abi_version: ABI_VERSION,
  description: 'Share of the reference answer\'s keywords found in the output (a Node.js process plugin).',
  range: { min: 0, max: 1 },
  threshold: 0.5,
  config_schema: {
    type: 'object',
    properties: { min_length: { type: 'integer', minimum: 0, description: 'Words this long or shorter are ignored. Optional. Default is 3.' } },
    additionalProperties: false,
  },
  defaults: { min_length: 3 },
};

const words = (text, minLength) => new Set(
  (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) || []).filter((w) => w.length > minLength),
);

function score(run, config) {
  const expected = run.expected || '';
  if (!expected.trim()) {
    return { status: 'skipped', reason: 'the run has no expected answer to compare with', telemetry: { duration_ms: 0 } };
  }
  const want = words(expected, config.min_length);
  if (want.size === 0) {
    return { status: 'skipped', reason: `the expected answer has no word longer than ${config.min_length} characters`, telemetry: { duration_ms: 0 } };
  }
  const got = words(run.output || '', config.min_length);
  const found = [...want].filter((w) => got.has(w));
  const missing = [...want].filter((w) => !got.has(w));
  const value = found.length / want.size;
  const result = {
    status: 'scored',
    score: value,
    reason: `${found.length} of ${want.size} keywords of the expected answer found` + (missing.length ? `; missing: ${missing.slice(0, 5).join(', ')}` : ''),
    telemetry: { duration_ms: 0 },
  };
  if (!(run.output || '').trim()) result.flags = ['empty_output'];
  return result;
}

// A scorer that asks the judge: does the output answer what the input asked? It declares the
// judge capability; the host gives each call a judge (below) whose requests it runs.
const judgeInfo = {
  name: 'node_answers_question',
  version: '0.1.0',
  abi_version: ABI_VERSION,
  description: 'Whether the output addresses what the input asked, as an LLM judge grades it (a Node.js process plugin).',
  range: { min: 0, max: 1 },
  threshold: 0.7,
  capabilities: ['judge'],
};

class ScorerError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}

async function judgeScore(run, _config, judge) {
  if (!judge) {
    return { status: 'skipped', reason: 'node_answers_question needs an LLM judge and none is configured: pass --judge-url URL and --judge-model NAME', telemetry: { duration_ms: 0 } };
  }
  const prompt = `You grade whether an AI agent's answer addresses what it was asked.\n<question>\n${run.input || ''}\n</question>\n\n<answer>\n${run.output || ''}\n</answer>\n\n` +
    'Reply with a JSON object: {"score": a number from 0 (does not address it) to 1 (fully addresses it), "reasoning": "one sentence"}.';
  const [answer] = await judge.complete([{ messages: [{ role: 'user', content: prompt }], json: true }]);
  if (answer.error) throw new ScorerError(answer.error.code || 'judge_error', answer.error.message);
  let verdict;
  try {
    verdict = JSON.parse(answer.content.slice(answer.content.indexOf('{'), answer.content.lastIndexOf('}') + 1));
  } catch {
    throw new ScorerError('judge_error', `the judge answered no JSON object; judge output: ${answer.content.slice(0, 500)}`);
  }
  if (typeof verdict.score !== 'number' || verdict.score < 0 || verdict.score > 1) {
    throw new ScorerError('judge_error', `the judge's score is ${JSON.stringify(verdict.score)}, not a number from 0 to 1`);
  }
  return { status: 'scored', score: verdict.score, reason: String(verdict.reasoning || ''), steps: [{ name: 'judge', prompt, output: verdict }], telemetry: { duration_ms: 0 } };
}

// The scorers this plugin carries, by name: Info, how a config is checked, and score (which
// may be async and ask the judge).
const scorers = new Map([
  [info.name, { info, configure: configureKeywords, score: (run, config) => score(run, config) }],
  [judgeInfo.name, { info: judgeInfo, configure: (config) => config, score: judgeScore }],
]);

function configureKeywords(config) {
  for (const k of Object.keys(config)) {
    if (!(k in info.config_schema.properties)) {
      throw new ScorerError('invalid_config', `unknown config field "${k}"; known: min_length`);
    }
  }
  if (!Number.isInteger(config.min_length) || config.min_length < 0) {
    throw new ScorerError('invalid_config', 'config field "min_length" must be an integer >= 0');
  }
  return config;
}

const instances = new Map();
let nextInstance = 1;
const err = (code, message) => ({ code, message });

// runScore decodes a call's run, scores it with the instance and answers the ScoreResponse;
// a scorer's exception is the call's error (failed with its message, never a 0).
async function runScore(req, judge) {
  const inst = instances.get(Number(req.instance));
  if (!inst) return { error: err('unavailable', `no configured instance ${req.instance}`) };
  let run;
  try {
    run = JSON.parse(req.run_json.toString());
  } catch (e) {
    return { error: err('invalid_run', `decode run: ${e.message}`) };
  }
  try {
    const result = await inst.scorer.score(run, inst.config, judge);
    return { result_json: Buffer.from(JSON.stringify(result)) };
  } catch (e) {
    log('error', 'scorer failed', { scorer: inst.scorer.info.name, error: e.message });
    return { error: err(e.code || 'scorer_error', e.message) };
  }
}

// decodeResponses reads the host's answer to a batch of completions.
function decodeResponses(resp) {
  if (resp.error && (resp.error.code || resp.error.message)) throw new ScorerError(resp.error.code || 'judge_error', resp.error.message);
  return JSON.parse(resp.responses_json.toString() || '[]');
}

// streamJudge is the judge of a call on the Session: a request goes out on the stream and
// the host's answer is the next message in.
function streamJudge(call, next) {
  return {
    async complete(requests) {
      call.write({ complete: { requests_json: Buffer.from(JSON.stringify(requests)) } });
      const msg = await next();
      if (!msg || msg.msg !== 'complete') throw new ScorerError('judge_error', `session: host answered a judge request with ${msg ? msg.msg : 'the end of the stream'}`);
      return decodeResponses(msg.complete);
    },
  };
}

// The broker: the host sends the address of each service it serves for the plugin (the
// judge) on go-plugin's broker stream; a unary call's judge dials the one its id names.
const brokered = new Map(); // id -> ConnInfo
const brokerWaiters = [];
const judgeClients = new Map();
function dialJudge(id) {
  if (judgeClients.has(id)) return Promise.resolve(judgeClients.get(id));
  return new Promise((resolve, reject) => {
    const connect = () => {
      const info = brokered.get(id);
      const target = info.network === 'unix' ? `unix:${info.address}` : info.address;
      const client = new pb.Judge(target, grpc.credentials.createInsecure());
      judgeClients.set(id, client);
      resolve(client);
    };
    if (brokered.has(id)) return connect();
    const timer = setTimeout(() => reject(new ScorerError('judge_error', `dial the host's judge (broker id ${id}): the host sent no address for it within 5s`)), 5000);
    brokerWaiters.push({ id, go: () => { clearTimeout(timer); connect(); } });
  });
}

function brokerJudge(client, callId, deadline) {
  return {
    complete(requests) {
      return new Promise((resolve, reject) => {
        const opts = deadline ? { deadline } : {};
        client.Complete({ call: callId, requests_json: Buffer.from(JSON.stringify(requests)) }, opts, (e, resp) => {
          if (e) return reject(new ScorerError('judge_error', `judge call to the host failed: ${e.details || e.message}`));
          try { resolve(decodeResponses(resp)); } catch (x) { reject(x); }
        });
      });
    },
  };
}

const scorerService = {
  Info(_call, cb) {
    cb(null, { infos_json: Buffer.from(JSON.stringify([...scorers.values()].map((s) => s.info))), session: true });
  },
  Configure(call, cb) {
    const { scorer: name, config_json: raw } = call.request;
    const scorer = scorers.get(name);
    if (!scorer) {
      return cb(null, { error: err('invalid_config', `plugin carries no scorer "${name}"`) });
    }
    let config;
    try {
      config = { ...(scorer.info.defaults || {}), ...(raw && raw.length ? JSON.parse(raw.toString()) : {}) };
      config = scorer.configure(config);
    } catch (e) {
      return cb(null, { error: err(e.code || 'invalid_config', e instanceof SyntaxError ? `config is not JSON: ${e.message}` : e.message) });
    }
    const id = nextInstance++;
    instances.set(id, { scorer, config });
    log('debug', 'configured', { instance: id, scorer: name });
    cb(null, { instance: id });
  },
  Score(call, cb) {
    const req = call.request;
    const judge = req.judge_broker_id
      ? dialJudge(req.judge_broker_id).then((c) => brokerJudge(c, req.call, call.getDeadline()))
      : Promise.resolve(null);
    judge.then((j) => runScore(req, j), (e) => ({ error: err(e.code || 'judge_error', e.message) }))
      .then((resp) => cb(null, resp));
  },
  Release(call, cb) {
    instances.delete(Number(call.request.instance));
    cb(null, {});
  },
  // Session: Score calls on one stream, one at a time; a judge request of the call in
  // progress goes out on the stream and its answer is the next message in.
  Session(call) {
    const queue = [];
    const waiting = [];
    let ended = false;
    call.on('data', (msg) => (waiting.length ? waiting.shift()(msg) : queue.push(msg)));
    call.on('end', () => {
      ended = true;
      while (waiting.length) waiting.shift()(null);
      call.end();
    });
    call.on('error', () => {});
    const next = () => (queue.length ? Promise.resolve(queue.shift()) : ended ? Promise.resolve(null) : new Promise((r) => waiting.push(r)));
    (async () => {
      for (let msg = await next(); msg; msg = await next()) {
        if (msg.msg !== 'score') {
          call.destroy(Object.assign(new Error(`session: got ${msg.msg} between calls, want a score request`), { code: grpc.status.INVALID_ARGUMENT }));
          return;
        }
        const req = msg.score;
        let judge = null;
        try {
          if (req.session_judge) judge = streamJudge(call, next);
          else if (req.judge_broker_id) judge = brokerJudge(await dialJudge(req.judge_broker_id), req.call);
        } catch (e) {
          call.write({ score: { error: err(e.code || 'judge_error', e.message) } });
          continue;
        }
        call.write({ score: await runScore(req, judge) });
      }
    })();
  },
};
const server = new grpc.Server();
server.addService(pb.Scorer.service, scorerService);
server.addService(health.Health.service, {
  Check(call, cb) {
    const known = call.request.service === '' || call.request.service === 'plugin';
    cb(null, { status: known ? 'SERVING' : 'SERVICE_UNKNOWN' });
  },
});
server.addService(brokerPb.GRPCBroker.service, {
  StartStream(call) {
    call.on('data', (info) => {
      brokered.set(info.service_id, info);
      for (let i = brokerWaiters.length - 1; i >= 0; i--) {
        if (brokerWaiters[i].id === info.service_id) brokerWaiters.splice(i, 1)[0].go();
      }
    });
    call.on('end', () => call.end());
    call.on('error', () => {});
  },
});
server.addService(controller.GRPCController.service, {
  Shutdown(_call, cb) {
    cb(null, {});
    log('info', 'shutting down at the host\'s request');
    server.tryShutdown(() => process.exit(0));
    setTimeout(() => process.exit(0), 500).unref();
  },
});

// Listen where the host can reach us: a Unix socket in the folder the host names
// (PLUGIN_UNIX_SOCKET_DIR; the host's sandbox gives the plugin no network, so loopback
// TCP would be a loopback of its own), or loopback TCP for a host that names none.
const socketDir = process.env.PLUGIN_UNIX_SOCKET_DIR;
const socketPath = socketDir && path.join(socketDir, `node-scorer-${process.pid}.sock`);
const address = socketPath ? `unix:${socketPath}` : '127.0.0.1:0';
server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (e, port) => {
  if (e) {
    log('error', 'cannot listen', { address, error: e.message });
    process.exit(1);
  }
  log('info', 'serving', { scorers: [...scorers.keys()], address: socketPath || `127.0.0.1:${port}` });
  const where = socketPath ? `unix|${socketPath}` : `tcp|127.0.0.1:${port}`;
  process.stdout.write(`${CORE_PROTOCOL_VERSION}|${APP_PROTOCOL_VERSION}|${where}|grpc\n`);
});
