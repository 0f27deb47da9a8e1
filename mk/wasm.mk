# WASM runtime: every built-in scorer as one WASM reactor, and the C example guest, each
# with a manifest that pins its sha256:
#   scorekit score --runtime wasm ...            (loads build/wasm)
#   scorekit score --plugins build/wasm-c ...    (the C example)
# Tools: Go for the reactor; clang and lld for the C guest (TOOLS in the Makefile).

WASM_DIR   := build/wasm
WASM_C_DIR := build/wasm-c
WASM_GO_SOURCES := $(shell find sdk plugins internal -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod go.sum

.PHONY: wasm-plugins
wasm-plugins: $(WASM_DIR)/builtin.plugin.json $(WASM_C_DIR)/c_contains.plugin.json ## build the WASM plugins and their manifests

$(WASM_DIR)/builtin.wasm: $(WASM_GO_SOURCES)
	@mkdir -p $(@D)
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./plugins/builtin/plugin

$(WASM_C_DIR)/c_contains.wasm: examples/wasm-c/scorer.c examples/wasm-c/Makefile
	$(MAKE) -s -C examples/wasm-c OUT=$(CURDIR)/$@

# The build of the built-ins replaces them, so its manifest opts in by name. It gets 128 MiB:
# scoring a 1 MiB output against a 1 MiB reference peaks near the default 64 MiB, and a Go
# guest's collector, which paces itself on time too, overshoots it on a busy machine.
$(WASM_DIR)/%.plugin.json: $(WASM_DIR)/%.wasm
	$(GO) run ./internal/cmd/mkmanifest -runtime wasm -replaces-builtin -memory-mib 128 -o $@ $<
$(WASM_C_DIR)/%.plugin.json: $(WASM_C_DIR)/%.wasm
	$(GO) run ./internal/cmd/mkmanifest -runtime wasm -o $@ $<

ARTIFACTS += $(WASM_DIR)/builtin.plugin.json $(WASM_C_DIR)/c_contains.plugin.json
