'use strict';
// The OpenTelemetry SDK as a Node app sets it up: a NodeTracerProvider (registered as the
// global one) and, when asked, a LoggerProvider (the global one too), each with a batch
// processor per OTLP/HTTP exporter.
//
// exporters: which OTLP/HTTP encodings to export in: 'json' (the exporter-*-otlp-http
// packages, application/json) and 'protobuf' (exporter-*-otlp-proto). With a url the
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

// checked wraps an exporter so that a failed export is remembered: shutdown then throws,
// and the process exits non-zero instead of losing the spans without a word.
function checked(exporter, failures, what) {
  return {
    export(items, done) {
      exporter.export(items, (result) => {
        if (result.code !== 0) failures.push(`${what}: ${result.error ? result.error.message : 'failed'}`);
        done(result);
      });
    },
    forceFlush: () => (exporter.forceFlush ? exporter.forceFlush() : Promise.resolve()),
    shutdown: () => exporter.shutdown(),
  };
}

function setup({ serviceName, exporters, url, withLogs = false }) {
  diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.ERROR);
  const failures = [];
  const resource = resourceFromAttributes({ 'service.name': serviceName });
  const opts = (signal) => (url ? { url: `${url}/v1/${signal}` } : {});
  const tracerProvider = new NodeTracerProvider({
    resource,
    spanProcessors: exporters.map(
      (e) => new BatchSpanProcessor(checked(new TRACE_EXPORTERS[e](opts('traces')), failures, `traces (${e})`)),
    ),
  });
  tracerProvider.register();
  let loggerProvider;
  if (withLogs) {
    loggerProvider = new LoggerProvider({
      resource,
      processors: exporters.map(
        (e) => new BatchLogRecordProcessor({ exporter: checked(new LOG_EXPORTERS[e](opts('logs')), failures, `logs (${e})`) }),
      ),
    });
    logs.setGlobalLoggerProvider(loggerProvider);
  }
  return {
    tracerProvider,
    loggerProvider,
    // shutdown flushes every span and log record and stops the providers; it throws when
    // an export failed.
    async shutdown() {
      await tracerProvider.forceFlush();
      if (loggerProvider) await loggerProvider.forceFlush();
      await tracerProvider.shutdown();
      if (loggerProvider) await loggerProvider.shutdown();
      if (failures.length > 0) throw new Error(`export failed: ${failures.join('; ')}`);
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
