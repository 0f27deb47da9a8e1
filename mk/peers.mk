# Side-by-side benchmark against Mastra's code scorers (BENCHMARKS.md, "Side by side with
# Mastra"). Needs node and npm; installs @mastra/evals into a throwaway folder.

.PHONY: bench-peers

bench-peers: ## time scorekit's deterministic scorers against Mastra's on >= 2,000 shared runs, sides alternated over ROUNDS (5)
	RUNTIMES="$(or $(RUNTIMES),native)" ROUNDS="$(or $(ROUNDS),5)" bench/peers/run.sh
