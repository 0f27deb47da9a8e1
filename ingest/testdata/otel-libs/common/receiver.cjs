'use strict';
// A small OTLP/HTTP receiver for the captures: it keeps every request body it is sent, as
// it was sent (only a gzip Content-Encoding is undone), and answers as a collector does.
//
//   POST /NAME/v1/traces, /NAME/v1/logs, /NAME/v1/metrics
//
// NAME (letters, digits, "-") is the capture the body belongs to; the body goes under
// DIR/NAME/:
//
//   application/json       appended as one line to SIGNAL.jsonl (one request a line, in the
//                          order they came; an OTLP/JSON body the exporters send has no
//                          newline, and one that has is refused, not rewritten)
//   application/x-protobuf written to protobuf/SIGNAL-NNN.pb (NNN counts that capture's
//                          protobuf requests of the signal from 001)
//
// The answer is an empty Export*ServiceResponse in the request's encoding.

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const zlib = require('node:zlib');

const ROUTE = /^\/([A-Za-z0-9-]+)\/v1\/(traces|logs|metrics)$/;

function start({ dir, port = 0, log = () => {} }) {
  const counts = new Map();
  const requests = []; // {name, signal, type, bytes, file}
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const fail = (status, msg) => {
        log(`receiver: ${status} ${req.method} ${req.url}: ${msg}`);
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(msg + '\n');
      };
      const m = ROUTE.exec(req.url.split('?')[0]);
      if (req.method !== 'POST' || !m) return fail(404, 'want POST /NAME/v1/traces, /NAME/v1/logs or /NAME/v1/metrics');
      const [, name, signal] = m;
      let body = Buffer.concat(chunks);
      const enc = (req.headers['content-encoding'] || '').toLowerCase();
      if (enc === 'gzip') {
        try {
          body = zlib.gunzipSync(body);
        } catch (e) {
          return fail(400, `gzip body: ${e.message}`);
        }
      } else if (enc !== '' && enc !== 'identity') {
        return fail(415, `Content-Encoding ${enc}: want gzip or none`);
      }
      const type = (req.headers['content-type'] || '').split(';')[0].trim().toLowerCase();
      const out = path.join(dir, name);
      fs.mkdirSync(out, { recursive: true });
      let file;
      if (type === 'application/json') {
        if (body.includes(0x0a)) return fail(400, 'a JSON body with a newline cannot be kept as one line');
        file = path.join(out, `${signal}.jsonl`);
        fs.appendFileSync(file, Buffer.concat([body, Buffer.from('\n')]));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"partialSuccess":{}}');
      } else if (type === 'application/x-protobuf') {
        const key = `${name}/${signal}`;
        const n = (counts.get(key) || 0) + 1;
        counts.set(key, n);
        fs.mkdirSync(path.join(out, 'protobuf'), { recursive: true });
        file = path.join(out, 'protobuf', `${signal}-${String(n).padStart(3, '0')}.pb`);
        fs.writeFileSync(file, body);
        res.writeHead(200, { 'content-type': 'application/x-protobuf' });
        res.end();
      } else {
        return fail(415, `Content-Type ${type || '(none)'}: want application/json or application/x-protobuf`);
      }
      requests.push({ name, signal, type, bytes: body.length, file });
      log(`receiver: ${name} ${signal} ${type} ${body.length} bytes`);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () =>
      resolve({ server, requests, url: `http://127.0.0.1:${server.address().port}` }),
    );
  });
}

module.exports = { start };
