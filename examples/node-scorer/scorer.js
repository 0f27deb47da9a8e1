#!/usr/bin/env node
// A scorekit process plugin in Node.js. The host (host/process) starts this file, pinned by
// sha256 in its manifest, and talks to it as to any go-plugin plugin:
//
//   1. the host sets SCOREKIT_PLUGIN (the magic cookie) and PLUGIN_PROTOCOL_VERSIONS;
//   2. the plugin serves gRPC and prints the handshake line on stdout:
//        CORE-VERSION|APP-VERSION|NETWORK|ADDRESS|grpc
//   3. the host checks grpc.health.v1 for service "plugin", then calls the Scorer service of
//      proto/scorekit/plugin/v1/plugin.proto, whose messages carry scorekit's JSON contract
//      (schemas/) as bytes;
//   4. on close the host calls plugin.GRPCController/Shutdown and the plugin exits.
//
// Logs go to stderr as JSON lines ({"@level", "@message", fields}); the host forwards them
// to its structured logger with their level and fields.
//
// Setup: npm ci (or make -C ../.. node-scorer). Not supported: AutoMTLS and the judge
// broker (this scorer needs neither).
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
  includeDirs: dirs, keepCase: true, longs: Number, defaults: true,
}));
const pb = load('scorekit/plugin/v1/plugin.proto', [path.join(here, '..', '..', 'proto')]).scorekit.plugin.v1;
const health = load('health.proto', [path.join(here, 'proto')]).grpc.health.v1;
const controller = load('controller.proto', [path.join(here, 'proto')]).plugin;

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

const instances = new Map();
let nextInstance = 1;
const err = (code, message) => ({ code, message });

const scorerService = {
  Info(_call, cb) {
    cb(null, { infos_json: Buffer.from(JSON.stringify([info])) });
  },
  Configure(call, cb) {
    const { scorer, config_json: raw } = call.request;
    if (scorer !== info.name) {
      return cb(null, { error: err('invalid_config', `plugin carries no scorer "${scorer}"`) });
    }
    let config;
    try {
      config = { ...info.defaults, ...(raw && raw.length ? JSON.parse(raw.toString()) : {}) };
    } catch (e) {
      return cb(null, { error: err('invalid_config', `config is not JSON: ${e.message}`) });
    }
    for (const k of Object.keys(config)) {
      if (!(k in info.config_schema.properties)) {
        return cb(null, { error: err('invalid_config', `unknown config field "${k}"; known: min_length`) });
      }
    }
    if (!Number.isInteger(config.min_length) || config.min_length < 0) {
      return cb(null, { error: err('invalid_config', 'config field "min_length" must be an integer >= 0') });
    }
    const id = nextInstance++;
    instances.set(id, config);
    log('debug', 'configured', { instance: id, min_length: config.min_length });
    cb(null, { instance: id });
  },
  Score(call, cb) {
    const config = instances.get(Number(call.request.instance));
    if (!config) {
      return cb(null, { error: err('unavailable', `no configured instance ${call.request.instance}`) });
    }
    let run;
    try {
      run = JSON.parse(call.request.run_json.toString());
    } catch (e) {
      return cb(null, { error: err('invalid_run', `decode run: ${e.message}`) });
    }
    cb(null, { result_json: Buffer.from(JSON.stringify(score(run, config))) });
  },
  Release(call, cb) {
    instances.delete(Number(call.request.instance));
    cb(null, {});
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
  log('info', 'serving', { scorer: info.name, address: socketPath || `127.0.0.1:${port}` });
  const where = socketPath ? `unix|${socketPath}` : `tcp|127.0.0.1:${port}`;
  process.stdout.write(`${CORE_PROTOCOL_VERSION}|${APP_PROTOCOL_VERSION}|${where}|grpc\n`);
});
