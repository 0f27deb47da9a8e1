# GenAI instrumentation libraries as platforms run them (ingest/testdata/otel-libs): the
# golden OTLP exports captured from each at a pinned version, and the live test's Node app
# (apps/node20: the AI SDK 6 and @opentelemetry/instrumentation-openai 0.21 with the
# OTLP exporters 0.223), which make test installs from its lockfile with npm ci, as CI does.

OTEL_LIBS := ingest/testdata/otel-libs
OTEL_LIVE_APP := $(OTEL_LIBS)/apps/node20
OTEL_LIVE_NODE_MODULES := $(OTEL_LIVE_APP)/node_modules/.package-lock.json

.PHONY: otel-live-app otel-libs-capture

otel-live-app: $(OTEL_LIVE_NODE_MODULES) ## npm ci the live OTLP test's Node app (AI SDK, OTel OpenAI instrumentation)

$(OTEL_LIVE_NODE_MODULES): $(OTEL_LIVE_APP)/package-lock.json $(OTEL_LIVE_APP)/package.json
	@command -v npm >/dev/null || { echo "npm not found: the live OTLP test's app needs Node.js $(NODE_MIN) or later and npm (make deps, or nodejs.org)"; exit 1; }
	cd $(OTEL_LIVE_APP) && npm ci --no-audit --no-fund
	touch $@

ARTIFACTS += $(OTEL_LIVE_NODE_MODULES)

# Not part of make test: it installs every captured library (Mastra's Node 22 too, from
# npm) and rewrites the committed goldens.
otel-libs-capture: ## regenerate the golden OTLP exports of the GenAI instrumentation libraries (ingest/testdata/otel-libs)
	bash $(OTEL_LIBS)/capture.sh
