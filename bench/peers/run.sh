#!/bin/sh
# Side-by-side benchmark of scorekit's deterministic scorers and Mastra's code scorers
# (make bench-peers). Installs @mastra/evals into a throwaway folder outside the module,
# builds a corpus of >= 2,000 runs from ../shared/data, times both sides' scoring loops in
# the same run on this machine, and prints speed and agreement tables in Markdown.
#
# Environment: MASTRA_EVALS_VERSION (default 1.10.2); KEEP=1 keeps the work folder;
# RUNTIMES (default "native"; add wasm once host/wasm lands).
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
version=${MASTRA_EVALS_VERSION:-1.10.2}
runtimes=${RUNTIMES:-native}
work=$(mktemp -d "${TMPDIR:-/tmp}/scorekit-peers.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
	echo "work folder: $work" >&2
else
	trap 'rm -rf "$work"' EXIT
fi

command -v node >/dev/null || { echo "bench-peers: node not found; install Node.js 20 or later" >&2; exit 1; }
command -v npm >/dev/null || { echo "bench-peers: npm not found; install npm" >&2; exit 1; }

echo "== installing @mastra/evals@$version @mastra/core into $work/mastra" >&2
mkdir -p "$work/mastra"
(cd "$work/mastra" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "@mastra/evals@$version" @mastra/core >/dev/null)

echo "== building the corpus and the Go side" >&2
(cd "$root" && go build -o "$work/peers" ./bench/peers)
(cd "$root" && "$work/peers" corpus -out "$work/runs.jsonl")

echo "== scoring (Mastra, then scorekit: $runtimes)" >&2
MASTRA_DIR="$work/mastra" node "$root/bench/peers/mastra.mjs" "$work/runs.jsonl" "$work/mastra.json"
files=""
for rt in $runtimes; do
	extra=""
	if [ "$rt" = wasm ]; then
		mkdir -p "$work/plugins"
		(cd "$root" && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o "$work/plugins/heuristic.wasm" ./plugins/heuristic/plugin)
		sum=$(sha256sum "$work/plugins/heuristic.wasm" | cut -d' ' -f1)
		printf '{"name": "heuristic", "runtime": "wasm", "artifact": "heuristic.wasm", "sha256": "%s"}\n' "$sum" >"$work/plugins/heuristic.plugin.json"
		extra="-plugins $work/plugins"
	fi
	# shellcheck disable=SC2086
	(cd "$root" && "$work/peers" score -in "$work/runs.jsonl" -out "$work/$rt.json" -runtime "$rt" $extra)
	files="$files $work/$rt.json"
done

echo "== results" >&2
echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); Go $(go env GOVERSION | sed 's/^go//'); Node $(node --version)"
echo "Corpus: $(wc -l <"$work/runs.jsonl") runs from ../shared/data; warm-up 200 runs per scorer, then one timed sequential pass"
echo
# shellcheck disable=SC2086
"$work/peers" compare -runs "$work/runs.jsonl" -mastra "$work/mastra.json" $files
