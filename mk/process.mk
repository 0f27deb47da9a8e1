# Process runtime (hashicorp/go-plugin over gRPC): generated protocol code, every built-in
# scorers as a process plugin, and the Node.js example plugin's dependencies.

# Generator versions are pinned so `make proto` is reproducible; protoc itself comes from
# Debian's protobuf-compiler (make generate installs it as root, else says how).
GENERATE_TOOLS += protoc:protobuf-compiler:protobuf
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
PROTO_BIN := $(CURDIR)/bin/proto
PROTO_SRC := proto/scorekit/plugin/v1/plugin.proto

.PHONY: proto proto-tools process-plugins node-scorer

proto-tools: $(PROTO_BIN)/protoc-gen-go-$(PROTOC_GEN_GO_VERSION) $(PROTO_BIN)/protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION)

$(PROTO_BIN)/protoc-gen-go-$(PROTOC_GEN_GO_VERSION):
	GOBIN=$(PROTO_BIN) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	touch $@

$(PROTO_BIN)/protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION):
	GOBIN=$(PROTO_BIN) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	touch $@

# proto regenerates internal/pluginpb from proto/. `make check` fails when the committed
# code differs from what this produces.
proto: proto-tools ## regenerate internal/pluginpb from proto/ (pinned generators, Debian protoc)
	@NODE_MIN= bash mk/tools.sh "make proto" protoc:protobuf-compiler:protobuf
	PATH=$(PROTO_BIN):$$PATH protoc -I proto \
		--go_out=. --go_opt=module=github.com/scorekit/scorekit \
		--go-grpc_out=. --go-grpc_opt=module=github.com/scorekit/scorekit \
		$(PROTO_SRC)

GENERATE += proto

# Every built-in scorer as one process plugin, with its manifest (sha256 pinned):
# scorekit score --runtime process --plugins build/process ...
process-plugins: build/process/builtin.plugin.json build/process/node-scorer.plugin.json ## build every built-in scorer as one process plugin with its manifest

build/process/builtin: $(shell find sdk plugins internal -name '*.go' 2>/dev/null) go.mod go.sum
	@mkdir -p $(@D)
	go build -o $@ ./plugins/builtin/plugin

# The build of the built-ins replaces them, so its manifest opts in by name.
build/process/builtin.plugin.json: build/process/builtin
	go run ./internal/cmd/mkmanifest -runtime process -replaces-builtin -o $@ $<

# The Node.js example's manifest pins the script itself (it is the executable); the sandbox
# shows it the protocol it loads from proto/ ("read").
build/process/node-scorer.plugin.json: examples/node-scorer/scorer.js examples/node-scorer/node_modules/.package-lock.json
	@mkdir -p $(@D)
	printf '{"name":"node-scorer","runtime":"process","artifact":"../../examples/node-scorer/scorer.js","read":["../../proto"],"sha256":"%s"}\n' \
		"$$(sha256sum $< | cut -d' ' -f1)" > $@

# The Node.js example plugin needs its npm dependencies; CI installs them with npm ci.
node-scorer: examples/node-scorer/node_modules/.package-lock.json ## npm ci the Node.js example plugin

examples/node-scorer/node_modules/.package-lock.json: examples/node-scorer/package-lock.json examples/node-scorer/package.json
	cd examples/node-scorer && npm ci --no-audit --no-fund
	touch $@

ARTIFACTS += build/process/builtin.plugin.json build/process/node-scorer.plugin.json examples/node-scorer/node_modules/.package-lock.json
