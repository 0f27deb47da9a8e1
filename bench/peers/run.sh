#!/bin/sh
# Side-by-side benchmark of scorekit's deterministic scorers and Mastra's code scorers
# (make bench-peers). Installs @mastra/evals into a throwaway folder outside the module,
# builds a corpus of >= 2,000 runs from testdata/, times both sides' scoring loops in
# the same run on this machine, and prints speed and agreement tables in Markdown.
#
# Environment: MASTRA_EVALS_VERSION (default 1.10.2); KEEP=1 keeps the work folder;
# RUNTIMES (default "native"; "native wasm" adds the WASM column); ROUNDS (default 5).
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
version=${MASTRA_EVALS_VERSION:-1.10.2}
runtimes=${RUNTIMES:-native}
rounds=${ROUNDS:-5}
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

# The sides run in separate processes, alternated: round r runs Mastra first when r is odd
# and last when r is even, so a slow spell of this shared machine falls on both sides.
# completeness is timed in round 1 only (Mastra scores ~30 runs/s with it); the other four
# scorers in every round. compare reports medians over the rounds.
four=content_similarity,keyword_coverage,textual_difference,tone
for rt in $runtimes; do
	if [ "$rt" = wasm ]; then
		mkdir -p "$work/plugins"
		(cd "$root" && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o "$work/plugins/heuristic.wasm" ./plugins/heuristic/plugin)
		sum=$(sha256sum "$work/plugins/heuristic.wasm" | cut -d' ' -f1)
		printf '{"name": "heuristic", "runtime": "wasm", "artifact": "heuristic.wasm", "sha256": "%s"}\n' "$sum" >"$work/plugins/heuristic.plugin.json"
	fi
done
mastra_side() { # round, scorers
	MASTRA_DIR="$work/mastra" node "$root/bench/peers/mastra.mjs" "$work/runs.jsonl" "$work/mastra.$1.json" "$2"
	mastra_files="${mastra_files:+$mastra_files,}$work/mastra.$1.json"
}
ours_side() { # round, scorers
	for rt in $runtimes; do
		extra=""
		[ "$rt" = wasm ] && extra="-plugins $work/plugins"
		# shellcheck disable=SC2086
		(cd "$root" && "$work/peers" score -in "$work/runs.jsonl" -out "$work/$rt.$1.json" -runtime "$rt" -scorers "$2" $extra)
		files="$files $work/$rt.$1.json"
	done
}
mastra_files=""
files=""
r=1
while [ "$r" -le "$rounds" ]; do
	scorers=$four
	[ "$r" = 1 ] && scorers="completeness,$four"
	echo "== round $r of $rounds ($scorers)" >&2
	if [ $((r % 2)) = 1 ]; then
		mastra_side "$r" "$scorers"
		ours_side "$r" "$scorers"
	else
		ours_side "$r" "$scorers"
		mastra_side "$r" "$scorers"
	fi
	r=$((r + 1))
done

echo "== results" >&2
echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); Go $(go env GOVERSION | sed 's/^go//'); Node $(node --version); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Corpus: $(wc -l <"$work/runs.jsonl") runs from testdata/; $rounds rounds, the sides alternated; each round warms up on 1,000 runs, then times whole sequential passes for at least a second per scorer; medians over the rounds (completeness: round 1)"
echo
# shellcheck disable=SC2086
"$work/peers" compare -runs "$work/runs.jsonl" -mastra "$mastra_files" $files
