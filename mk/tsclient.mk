# The TypeScript client and its Mastra adapter (clients/typescript): npm ci from the lockfile,
# its types regenerated from the service's OpenAPI document (make generate), and its tests
# against a real scorekit serve built from this tree (part of make test).

TS_CLIENT := clients/typescript
TS_CLIENT_NODE_MODULES := $(TS_CLIENT)/node_modules/.package-lock.json

# The one Node.js version the repository asks for: the client's package.json "engines"
# (">=20"). make tools checks the node on PATH against it (mk/tools.sh), and so does the
# client's npm test (scripts/check-node.mjs).
NODE_MIN := $(shell sed -n 's/^ *"node": *">=\([0-9.]*\)".*/\1/p' $(TS_CLIENT)/package.json | head -1)
GENERATE_TOOLS += node:nodejs:node npm:npm:node

.PHONY: ts-client-deps ts-generate ts-test

ts-client-deps: $(TS_CLIENT_NODE_MODULES) ## npm ci the TypeScript client's pinned dependencies

$(TS_CLIENT_NODE_MODULES): $(TS_CLIENT)/package-lock.json $(TS_CLIENT)/package.json
	@command -v npm >/dev/null || { echo "npm not found: the TypeScript client needs Node.js $(NODE_MIN) or later and npm (make deps, or nodejs.org)"; exit 1; }
	cd $(TS_CLIENT) && npm ci --no-audit --no-fund
	touch $@

# The generated types follow openapi.json (regenerated first by go generate).
ts-generate: $(TS_CLIENT_NODE_MODULES) ## regenerate clients/typescript/src/openapi.ts from the OpenAPI document
	cd $(TS_CLIENT) && npm run --silent generate

GENERATE += ts-generate

# npm test checks the generated types are fresh, builds with tsc, then runs node --test.
# Where the Makefile checks its TOOLS first (make tools), so does this, so that make test on
# a machine without them stops at once, before anything is built.
ts-test: $(if $(TOOLS),tools) build $(TS_CLIENT_NODE_MODULES) ## test the TypeScript client and the Mastra adapter against a real scorekit serve
	cd $(TS_CLIENT) && SCOREKIT_BIN=$(CURDIR)/$(BIN) npm test

test: ts-test
