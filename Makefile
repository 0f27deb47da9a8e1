# scorekit's build. `make help` lists the targets.
#
# Other parts of the tree add their own rules in mk/*.mk: build artifacts the tests need
# (WASM modules, plugin binaries) are appended to ARTIFACTS, and code generators other than
# `go generate` to GENERATE. `make test` builds every ARTIFACTS first; `make demo` needs
# nothing but Go.
#
# TOOLS lists the commands `make test` needs besides Go, as COMMAND:DEBIAN-PACKAGE; when one
# is missing, `make test` stops before building anything and prints the one command that
# installs what is missing. mk/*.mk may append to it.

SHELL := bash
.DEFAULT_GOAL := help

ARTIFACTS :=
GENERATE :=
# clang and wasm-ld build examples/wasm-c; wat2wasm the sandbox tests' modules; node and
# npm the Node.js example plugin and the TypeScript client; bwrap confines process plugins;
# initdb (Debian keeps it off PATH) starts the service tests' PostgreSQL; chromium runs the
# dashboard's browser test. A name with a '/' is looked for as a file pattern.
TOOLS := clang:clang wasm-ld:lld wat2wasm:wabt node:nodejs npm:npm bwrap:bubblewrap \
	/usr/lib/postgresql/*/bin/initdb:postgresql chromium:chromium
-include mk/*.mk

GO ?= go
BIN := bin/scorekit

.PHONY: help build demo test tools deps check fmt-check vet tidy-check generate generate-check schemas quality bench bench-cli clean

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | sort -u | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-16s %s\n", $$1, $$2}'

build: ## build the command line into bin/scorekit
	$(GO) build -o $(BIN) ./cmd/scorekit

demo: build ## build, then score examples/runs.jsonl with the default scorer (needs only Go)
	$(BIN) score examples/runs.jsonl

# tools runs first: with -j or -k, a missing tool must still stop the test before a
# half-built tree does.
test: tools ## build the artifacts the tests need, then run every test
	@$(MAKE) --no-print-directory test-artifacts
	$(GO) test ./...

.PHONY: test-artifacts
test-artifacts: $(ARTIFACTS)

tools: ## check that the commands make test needs are installed, and say how to install the missing ones
	@missing=(); for t in $(TOOLS); do c="$${t%%:*}"; { command -v "$$c" || compgen -G "$$c"; } >/dev/null || missing+=("$$t"); done; \
	if [ $${#missing[@]} -gt 0 ]; then \
		pkgs=$$(printf '%s\n' "$${missing[@]}" | cut -d: -f2 | sort -u | tr "\n" " " | sed "s/ *$$//"); \
		echo "make test needs $$(printf '%s\n' "$${missing[@]}" | cut -d: -f1 | sed 's,.*/,,' | tr '\n' ' ')which this machine lacks. Install them with:"; \
		echo; echo "    sudo apt-get install -y --no-install-recommends $$pkgs"; echo; \
		echo "(make deps runs it; on another system, install the same tools from its packages)"; \
		exit 1; \
	fi

deps: ## install the Debian packages the build and the tests need (.ci/apt.txt)
	@pkgs=$$(sed -e 's/#.*//' -e 's/[[:space:]]*$$//' .ci/apt.txt | grep -v '^$$' | tr "\n" " " | sed "s/ *$$//"); \
	for t in $(TOOLS); do c="$${t%%:*}"; { command -v "$$c" || compgen -G "$$c"; } >/dev/null || pkgs="$$pkgs $${t##*:}"; done; \
	sudo=""; [ "$$(id -u)" -ne 0 ] && sudo=sudo; \
	echo "$$sudo apt-get install -y --no-install-recommends $$pkgs"; \
	$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$pkgs

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

bench-cli: ## time scorekit score against the build of BASE (default main), alternated (BENCHMARKS.md)
	$(GO) run ./bench/cli -base $(or $(BASE),main) -lines $(or $(LINES),100000) -rounds $(or $(ROUNDS),5)

clean: ## remove built binaries and artifacts
	rm -rf bin build
