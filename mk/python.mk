# Python: the scorer SDK (sdks/python), its examples (examples/python-*) and the service's
# client with its pytest gate (clients/python). Everything comes from Debian's packages
# (sdks/python/README.md says which versions are tested), never from PyPI:
#   - python3-grpcio and python3-protobuf serve a Python scorer as a process plugin;
#   - python3-jsonschema checks Info, results and configs in the SDK's test kit;
#   - python3-pytest runs the Python tests and is the client's gate;
#   - python3-pip and python3-setuptools install both packages from the repository offline;
#   - protoc with protobuf-compiler-grpc's grpc_python_plugin regenerates the SDK's gRPC code.
#
# Debian's python3 sees these under /usr/lib/python3/dist-packages; a Python of its own
# (pyenv, a venv without --system-site-packages) does not, so PYTHON is Debian's where it
# exists. The tests (internal/pythontest, driven by go test) use the same interpreter.

PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)
# Each package is looked for by its folder in /usr/share/doc, which Debian (and Ubuntu)
# installs with every package, also in images that drop the rest of the docs: a Python
# module is not a command, and the folder's name is the package's in what make test says.
PY_PKGS := python3-grpcio python3-protobuf python3-jsonschema python3-pytest python3-pip python3-setuptools
TOOLS += /usr/bin/python3:python3:- $(foreach p,$(PY_PKGS),/usr/share/doc/$(p):$(p):-)
GENERATE_TOOLS += /usr/bin/python3:python3:- grpc_python_plugin:protobuf-compiler-grpc:grpc

PY_SDK := sdks/python
PY_PROTO_OUT := $(PY_SDK)/src/scorekit_sdk/_proto
PY_CLIENT := clients/python

.PHONY: python-proto python-schemas python-client-types python-plugins

# python-proto regenerates the SDK's messages and gRPC stubs: the Scorer service of proto/
# and the parts of go-plugin a plugin serves (health, controller, broker), from
# $(PY_SDK)/proto. Each file is generated flat into the package; the stubs' imports of
# their messages are made relative so that the package needs nothing on sys.path.
python-proto: ## regenerate the Python SDK's gRPC code (Debian's protoc and grpc_python_plugin)
	@NODE_MIN= bash mk/tools.sh "make python-proto" protoc:protobuf-compiler:protobuf grpc_python_plugin:protobuf-compiler-grpc:grpc
	rm -f $(PY_PROTO_OUT)/*_pb2.py $(PY_PROTO_OUT)/*_pb2_grpc.py
	protoc -I proto/scorekit/plugin/v1 -I $(PY_SDK)/proto \
		--python_out=$(PY_PROTO_OUT) --grpc_python_out=$(PY_PROTO_OUT) \
		--plugin=protoc-gen-grpc_python=$$(command -v grpc_python_plugin) \
		plugin.proto health.proto grpc_broker.proto grpc_controller.proto
	sed -i -E 's/^import ([a-z_]+_pb2) as /from . import \1 as /' $(PY_PROTO_OUT)/*_pb2_grpc.py

# The SDK's test kit checks Info, results and runs against the contract's JSON Schemas,
# the same the host validates with: copies of schemas/ inside the package.
python-schemas: ## copy the contract's JSON Schemas into the Python SDK's test kit
	mkdir -p $(PY_SDK)/src/scorekit_sdk/schemas
	cp schemas/info.schema.json schemas/result.schema.json schemas/run.schema.json $(PY_SDK)/src/scorekit_sdk/schemas/

# The client's types follow openapi.json (regenerated first by go generate),
# as the TypeScript client's do.
python-client-types: ## regenerate the Python client's types from the service's OpenAPI document
	$(PYTHON) $(PY_CLIENT)/gen_types.py openapi.json $(PY_CLIENT)/src/scorekit_client/_openapi.py

GENERATE += python-proto python-schemas python-client-types

# The Python examples as process plugins, with manifests that pin each script and point
# Python at the SDK in this checkout (env PYTHONPATH, read-only in the sandbox: "read").
python-plugins: build/process/python-scorer.plugin.json build/process/python-judge.plugin.json ## write the manifests of the Python example plugins

PY_SDK_SOURCES := $(shell find $(PY_SDK)/src -name '*.py' 2>/dev/null)
# python_manifest NAME SCRIPT writes $@: the script pinned, PYTHONPATH the SDK of this
# checkout, which the sandbox shows read-only.
python_manifest = printf '{"name":"%s","runtime":"process","artifact":"../../%s","env":{"PYTHONPATH":"%s"},"read":["../../%s/src"],"sha256":"%s"}\n' \
	"$(1)" "$(2)" "$(CURDIR)/$(PY_SDK)/src" "$(PY_SDK)" "$$(sha256sum $(2) | cut -d' ' -f1)" > $@

build/process/python-scorer.plugin.json: examples/python-scorer/word_budget.py $(PY_SDK_SOURCES)
	@mkdir -p $(@D)
	$(call python_manifest,python-scorer,$<)

build/process/python-judge.plugin.json: examples/python-judge/answers_question.py $(PY_SDK_SOURCES)
	@mkdir -p $(@D)
	$(call python_manifest,python-judge,$<)

ARTIFACTS += build/process/python-scorer.plugin.json build/process/python-judge.plugin.json
