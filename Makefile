# agent-ls build, test and benchmark targets. `make test` is what CI runs.
GO        ?= go
BIN       := bin/agent-ls
# staticcheck 2026.2.2 is module version v0.8.2 (the proxy serves semver tags only).
STATICCHECK_VERSION := v0.8.2
# Tests build binaries without VCS stamping (no `git status` per build);
# `make build` stamps them: the module's VCS revision (+dirty) from the build
# info, or, where Go cannot read it (a git worktree, whose .git is a file),
# from git through the linker. `agent-ls version` prints it.
export GOFLAGS := -buildvcs=false
REVISION := $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo +dirty)

.PHONY: all build test test-go test-race test-e2e lint bench demo demo-lens fuzz soak deps clean release

all: build

build:
	$(GO) build -buildvcs=auto -ldflags "-X main.revision=$(REVISION)" -o $(BIN) ./cmd/agent-ls

# `make test` is what CI runs (.ci/run): prerequisites, then every Go test
# exactly once (the race detector runs the packages where concurrency lives,
# plain `go test` runs the rest; each fuzz target's seed corpus runs with its
# package), then the editor integrations. Random fuzzing is `make fuzz`.
# Phase timings and how they were measured: docs/TESTING.md.
# scripts/pg.sh runs the phases with one private PostgreSQL cluster for the run.
test: deps
	@bash scripts/pg.sh $(MAKE) --no-print-directory test-go test-race test-editors

# Packages with goroutines, locks or multi-process access: run under -race
# only (not a second time without it).
RACE_PKGS := ./store/... ./schema/... ./evolve/... ./engine/... ./mcp/... ./lsp/... ./events/... ./lens/... ./compose/...

# Every package not in RACE_PKGS.
TEST_GO_PKGS = $$($(GO) list ./... | grep -vxF "$$($(GO) list $(RACE_PKGS))")

test-go:
	$(GO) test -count=1 $(TEST_GO_PKGS)

test-race:
	$(GO) test -count=1 -race $(RACE_PKGS)

# Prerequisites of make test (apt packages, npm lockfiles); fails under
# CI=true when one is missing. Helpers that add a phase with its own
# prerequisites extend scripts/deps.sh (or a scripts/deps.d/*.sh it runs).
deps:
	@bash scripts/deps.sh

# For test/repo: the package lists make test uses.
.PHONY: print-RACE_PKGS print-test-go-pkgs
print-RACE_PKGS:
	@echo $(RACE_PKGS)
print-test-go-pkgs:
	@echo $(TEST_GO_PKGS)

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

# The demo, then the evolution lens served on its workspace (loopback; the
# workspace is kept, Ctrl-C stops the lens). KEEP_DEMO=1 make demo keeps the
# workspace and prints the lens command instead.
demo-lens: build
	@DEMO_LENS=1 bash scripts/demo.sh

# Every Go fuzz target for FUZZTIME each (make fuzz FUZZTIME=5m).
FUZZTIME ?= 30s
fuzz:
	@FUZZTIME=$(FUZZTIME) GO=$(GO) bash scripts/fuzz.sh

# The long kill and multi-process tests (AGENT_LS_SOAK=30s, AGENT_LS_KILLS=500 by default).
soak:
	@GO=$(GO) bash scripts/soak.sh

clean:
	rm -rf bin dist

# Release archives for linux/amd64, linux/arm64, darwin/amd64, darwin/arm64
# and windows/amd64 in dist/ (agent-ls_VERSION_OS_ARCH.tar.gz, .zip for
# Windows), the vsix beside them, and dist/SHA256SUMS. VERSION=v1.2.3 sets
# the stamped version (default: the exact git tag, else 0.0.0-dev+SHA).
release:
	@GO=$(GO) bash scripts/release.sh

# Editor integrations (editors/): `make vsix` packages the VS Code extension
# into editors/vscode/agent-ls.vsix; `make test-editors` lints, packages and
# tests it and runs the Neovim and Emacs configs headless.
.PHONY: vsix test-editors
vsix:
	cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error && npm run package

test-editors:
	@bash editors/test.sh

# The extension in a real VS Code: code-server 4.139 under Node 24 (both from
# test/vscode's npm lockfile), driven by Debian's headless Chromium; checks
# the schema diagnostics, an inlay hint and a code lens on a testdata agent
# and saves screenshots in test/vscode/out/. The first run installs for
# minutes, so it is not part of `make test` (docs/TESTING.md).
.PHONY: test-vscode
test-vscode:
	@bash scripts/test-vscode.sh
