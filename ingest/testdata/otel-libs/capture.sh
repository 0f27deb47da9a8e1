#!/usr/bin/env bash
# Regenerates the golden OTLP exports of the GenAI instrumentation libraries (README.md):
# installs each app's pinned dependencies from its lockfile, then captures every library
# against a local fake OpenAI server and OTLP receiver (common/capture-all.cjs). Offline
# but for npm ci; the machine's node (20) runs everything but Mastra, which runs on the
# Node 22 that apps/mastra's lockfile installs.
#
#   bash ingest/testdata/otel-libs/capture.sh [NAME...]   (or: cd apps/node20 && npm run capture)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
for app in node20 traceloop mastra; do
  (cd "apps/$app" && npm ci --no-audit --no-fund --loglevel=error)
done
exec node common/capture-all.cjs "$@"
