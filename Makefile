# scorekit's build. `make help` lists the targets.
#
# Other parts of the tree add their own rules in mk/*.mk: build artifacts the tests need
# (WASM modules, plugin binaries) are appended to ARTIFACTS, and code generators other than
# `go generate` to GENERATE. `make test` builds every ARTIFACTS first; `make demo` needs
# nothing but Go.
#
# TOOLS lists the commands `make test` needs besides Go, GENERATE_TOOLS those `make
# generate` needs, each as COMMAND:DEBIAN-PACKAGE:HOMEBREW-FORMULA (mk/tools.sh says more).
# When one is missing, `make test` installs it as root with apt (a container, CI) and
# otherwise stops before building anything, with the one command that installs it.
# mk/*.mk may append to both.

SHELL := bash
.DEFAULT_GOAL := help

ARTIFACTS :=
GENERATE :=
GENERATE_TOOLS :=
# clang and wasm-ld build examples/wasm-c; wat2wasm the sandbox tests' modules; node and
# npm the Node.js example plugin and the TypeScript client; bwrap confines process plugins
# (Linux only); initdb (Debian keeps it off PATH) starts the service tests' PostgreSQL;
# chromium runs the dashboard's browser test (Debian's /usr/bin/chromium).
TOOLS := clang:clang:llvm wasm-ld:lld:lld wat2wasm:wabt:wabt node:nodejs:node npm:npm:node bwrap:bubblewrap:- \
	/usr/lib/postgresql/*/bin/initdb:postgresql:postgresql@17 chromium:chromium:-
-include mk/*.mk

GO ?= go
BIN := bin/scorekit

.PHONY: help build demo test tools generate-tools deps check check-code fmt-check vet tidy-check generate generate-check schemas quality bench bench-cli clean

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | sort -u | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-16s %s\n", $$1, $$2}'

build: ## build the command line into bin/scorekit
	$(GO) build -o $(BIN) ./cmd/scorekit

demo: build ## build, then score examples/runs.jsonl with the default scorer (needs only Go)
	$(BIN) score examples/runs.jsonl

# tools runs first: with -j or -k, a missing tool must still stop the test before a
# half-built tree does.
test: tools ## install (as root with apt) or name what the tests lack, build their artifacts, then run every test
	@$(MAKE) --no-print-directory test-artifacts
	$(GO) test ./...

.PHONY: test-artifacts
test-artifacts: $(ARTIFACTS)

tools: ## check that the commands make test needs are installed; as root with apt, install the missing ones, else say how
	@NODE_MIN=$(NODE_MIN) bash mk/tools.sh "make test" $(TOOLS)

generate-tools: ## the same for the commands make generate needs
	@NODE_MIN=$(NODE_MIN) bash mk/tools.sh "make generate" $(GENERATE_TOOLS)

deps: ## install what make test and make generate need (apt; through sudo when not root)
	@NODE_MIN=$(NODE_MIN) bash mk/tools.sh --install "make deps" $(TOOLS) $(GENERATE_TOOLS)

check: check-code test ## the gate before merge: format, vet, tidy, regenerate, test

check-code: fmt-check vet tidy-check generate-check ## the gate without the tests: format, vet, tidy, regenerate (CI runs it after make test)

fmt-check: ## fail when a Go file is not gofmt-formatted
	@files=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$files" ]; then echo "not gofmt-formatted (fix: gofmt -w .):"; echo "$$files"; exit 1; fi

vet: ## go vet every package
	$(GO) vet ./...

tidy-check: ## fail when go.mod or go.sum is not tidy
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy (fix: go mod tidy)"; exit 1; }

generate: generate-tools ## regenerate every generated file (go generate and the mk/*.mk generators)
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

bench-cli: ## time scorekit score against the build of BASE (default main), alternated (BENCHMARKS.md)
	$(GO) run ./bench/cli -base $(or $(BASE),main) -lines $(or $(LINES),100000) -rounds $(or $(ROUNDS),5)

clean: ## remove built binaries and artifacts
	rm -rf bin build
