# agent-ls build, test and benchmark targets. `make test` is what CI runs.
GO        ?= go
BIN       := bin/agent-ls
# staticcheck 2026.2.2 is module version v0.8.2 (the proxy serves semver tags only).
STATICCHECK_VERSION := v0.8.2
export GOFLAGS := -buildvcs=false

.PHONY: all build test test-go test-race test-fuzz test-e2e lint bench demo fuzz soak deps clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/agent-ls

# All Go tests, the race detector on the concurrent packages, and (as they
# appear) the end-to-end and editor tests. Installs its prerequisites.
# scripts/pg.sh runs them with one private PostgreSQL cluster for the run.
test: deps
	@bash scripts/pg.sh $(MAKE) --no-print-directory test-go test-race test-fuzz test-editors

test-go:
	$(GO) test -count=1 ./...

test-race:
	$(GO) test -count=1 -race ./store/... ./schema/... ./evolve/... ./mcp/... ./lsp/...

# Every fuzz target for a short smoke run (2 s each; their seed corpora
# already run in test-go). `make fuzz` is the longer campaign.
test-fuzz:
	@FUZZTIME=2s GO=$(GO) bash scripts/fuzz.sh

deps:
	@bash scripts/deps.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@command -v staticcheck >/dev/null 2>&1 || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

# The language server driven over stdio by real clients (node vscode-jsonrpc,
# headless Neovim); also part of test-go. Fails under CI=true when a client is missing.
test-e2e: deps
	$(GO) test -count=1 -v ./test/e2e/

# Go benchmarks and the LSP harness against yaml-language-server; one summary
# table (BENCH_COUNT=3, BENCH_EDITS=50). Results go in docs/PERFORMANCE.md.
bench:
	@bash scripts/bench.sh

demo: build
	@bash scripts/demo.sh

# Every Go fuzz target for FUZZTIME each (make fuzz FUZZTIME=5m).
FUZZTIME ?= 30s
fuzz:
	@FUZZTIME=$(FUZZTIME) GO=$(GO) bash scripts/fuzz.sh

# The long kill and multi-process tests (AGENT_LS_SOAK=30s, AGENT_LS_KILLS=500 by default).
soak:
	@GO=$(GO) bash scripts/soak.sh

clean:
	rm -rf bin

# Editor integrations (editors/): `make vsix` packages the VS Code extension
# into editors/vscode/agent-ls.vsix; `make test-editors` lints, packages and
# tests it and runs the Neovim and Emacs configs headless.
.PHONY: vsix test-editors
vsix:
	cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error && npm run package

test-editors:
	@bash editors/test.sh
