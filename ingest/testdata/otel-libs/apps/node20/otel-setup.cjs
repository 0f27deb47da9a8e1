'use strict';
// The OpenTelemetry SDK as a Node app sets it up: a NodeTracerProvider (registered as the
// global one) and, when asked, a LoggerProvider (the global one too), each with a batch
// processor per OTLP/HTTP exporter.
//
// The encodings: 'json' (the exporter-*-otlp-http packages, application/json) and
// 'protobuf' (exporter-*-otlp-proto, application/x-protobuf). With a url the
// exporters send to url + '/v1/traces' and url + '/v1/logs'; without one they read the
// standard environment variables themselves (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, ...).

const { diag, DiagConsoleLogger, DiagLogLevel } = require('@opentelemetry/api');
const { logs } = require('@opentelemetry/api-logs');
const { OTLPLogExporter: JSONLogExporter } = require('@opentelemetry/exporter-logs-otlp-http');
const { OTLPLogExporter: ProtoLogExporter } = require('@opentelemetry/exporter-logs-otlp-proto');
const { OTLPTraceExporter: JSONTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { OTLPTraceExporter: ProtoTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { BatchLogRecordProcessor, LoggerProvider } = require('@opentelemetry/sdk-logs');
const { BatchSpanProcessor, NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');

const TRACE_EXPORTERS = { json: JSONTraceExporter, protobuf: ProtoTraceExporter };
const LOG_EXPORTERS = { json: JSONLogExporter, protobuf: ProtoLogExporter };

// checked wraps an exporter so that a failed export is remembered (shutdown then throws,
// and the process exits non-zero instead of losing the spans without a word) and what was
// exported is counted.
function checked(exporter, state, what, signal) {
  return {
    export(items, done) {
      exporter.export(items, (result) => {
        if (result.code !== 0) state.failures.push(`${what}: ${result.error ? result.error.message : 'failed'}`);
        else state.exported[signal] += items.length;
        done(result);
      });
    },
    forceFlush: () => (exporter.forceFlush ? exporter.forceFlush() : Promise.resolve()),
    shutdown: () => exporter.shutdown(),
  };
}

// setup starts the SDK. traces and logs list the encodings each signal is exported in
// (no logs: no LoggerProvider). The spans that end are also kept in ended, for an app
// that reports what it traced.
function setup({ serviceName, traces, logs: logEncodings = [], url }) {
  const ended = [];
  const keep = { onStart() {}, onEnd: (span) => ended.push(span), forceFlush: async () => {}, shutdown: async () => {} };
  diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN);
  const state = { failures: [], exported: { traces: 0, logs: 0 } };
  const resource = resourceFromAttributes({ 'service.name': serviceName });
  const opts = (signal) => (url ? { url: `${url}/v1/${signal}` } : {});
  const exporter = (classes, e, signal) => {
    if (!classes[e]) throw new Error(`${signal}: no exporter for the encoding ${e}; want ${Object.keys(classes).join(' or ')}`);
    return checked(new classes[e](opts(signal)), state, `${signal} (${e})`, signal);
  };
  const tracerProvider = new NodeTracerProvider({
    resource,
    spanProcessors: [keep, ...traces.map((e) => new BatchSpanProcessor(exporter(TRACE_EXPORTERS, e, 'traces')))],
  });
  tracerProvider.register();
  let loggerProvider;
  if (logEncodings.length > 0) {
    loggerProvider = new LoggerProvider({
      resource,
      processors: logEncodings.map((e) => new BatchLogRecordProcessor({ exporter: exporter(LOG_EXPORTERS, e, 'logs') })),
    });
    logs.setGlobalLoggerProvider(loggerProvider);
  }
  return {
    tracerProvider,
    loggerProvider,
    exported: state.exported,
    ended,
    // shutdown flushes every span and log record and stops the providers; it throws when
    // an export failed.
    async shutdown() {
      for (const p of [tracerProvider, loggerProvider].filter(Boolean)) {
        try {
          await p.forceFlush();
          await p.shutdown();
        } catch (e) {
          if (state.failures.length === 0) state.failures.push(e.message || String(e));
        }
      }
      if (state.failures.length > 0) throw new Error(`OTLP export failed: ${[...new Set(state.failures)].join('; ')}`);
    },
  };
}

// need returns an environment variable, or stops the process with a message naming it.
function need(name, hint) {
  const v = process.env[name];
  if (!v) {
    process.stderr.write(`${name} is not set: ${hint}\n`);
    process.exit(2);
  }
  return v;
}

module.exports = { setup, need };
