# scorekit's build. `make help` lists the targets.
#
# Other parts of the tree add their own rules in mk/*.mk: build artifacts the tests need
# (WASM modules, plugin binaries) are appended to ARTIFACTS, and code generators other than
# `go generate` to GENERATE. `make test` and `make demo` build every ARTIFACTS first.

SHELL := bash
.DEFAULT_GOAL := help

ARTIFACTS :=
GENERATE :=
-include mk/*.mk

GO ?= go
BIN := bin/scorekit

.PHONY: help build demo test check fmt-check vet tidy-check generate generate-check schemas quality bench clean

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | sort -u | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-16s %s\n", $$1, $$2}'

build: ## build the command line into bin/scorekit
	$(GO) build -o $(BIN) ./cmd/scorekit

demo: build $(ARTIFACTS) ## build, then score examples/runs.jsonl with the default scorer
	$(BIN) score examples/runs.jsonl

test: $(ARTIFACTS) ## build the artifacts the tests need, then run every test
	$(GO) test ./...

check: fmt-check vet tidy-check generate-check test ## the gate before merge: format, vet, tidy, regenerate, test

fmt-check: ## fail when a Go file is not gofmt-formatted
	@files=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$files" ]; then echo "not gofmt-formatted (fix: gofmt -w .):"; echo "$$files"; exit 1; fi

vet: ## go vet every package
	$(GO) vet ./...

tidy-check: ## fail when go.mod or go.sum is not tidy
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy (fix: go mod tidy)"; exit 1; }

generate: ## regenerate every generated file (go generate and the mk/*.mk generators)
	$(GO) generate ./...
	$(if $(strip $(GENERATE)),$(MAKE) $(GENERATE))

generate-check: generate ## fail when a generated file differs from what is committed
	@git diff --exit-code --stat || { echo "generated files are stale (fix: make generate, then commit)"; exit 1; }
	@new=$$(git status --porcelain --untracked-files=all | grep '^??'); \
	if [ -n "$$new" ]; then echo "generation created files git does not track (fix: make generate, then commit them or ignore them):"; echo "$$new"; exit 1; fi

schemas: ## regenerate the JSON Schemas under schemas/ from the sdk types
	$(GO) generate ./schemas

quality: $(ARTIFACTS) ## measure the scorers on the shared labelled data (QUALITY.md)
	$(GO) run ./internal/cmd/quality

bench: $(ARTIFACTS) ## run every benchmark with allocations (BENCHMARKS.md)
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean: ## remove built binaries and artifacts
	rm -rf bin build
