#!/usr/bin/env bash
# Tests the editor integrations: the VS Code extension (npm ci, lint, package
# the .vsix, node tests, a contract test against the real `agent-ls serve`
# built here or named by AGENT_LS_BIN), the Neovim config (headless Neovim)
# and the Emacs config (Eglot in batch Emacs), the last two against
# editors/test/fake-server.js.
# Missing prerequisites are installed with apt-get when running as root; under
# CI=true a prerequisite that is still missing fails the run, elsewhere that
# editor is skipped with a message.
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD

need_apt=()
command -v node >/dev/null 2>&1 || need_apt+=(nodejs npm)
command -v nvim >/dev/null 2>&1 || need_apt+=(neovim)
command -v emacs >/dev/null 2>&1 || need_apt+=(emacs-nox elpa-eglot) # Debian 12: Emacs 28, Eglot packaged apart
if command -v emacs >/dev/null 2>&1 && ! emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1; then
  need_apt+=(elpa-eglot)
fi
if [ ${#need_apt[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "editors: installing ${need_apt[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

missing() {
  if [ "${CI:-}" = true ]; then
    echo "editors: $1 is missing (required under CI)" >&2
    exit 1
  fi
  echo "editors: SKIP $2: $1 is not installed"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The real server, for the VS Code client's contract test (src/test/server.test.ts).
if [ -z "${AGENT_LS_BIN:-}" ] && command -v go >/dev/null 2>&1; then
  (cd .. && go build -o "$work/agent-ls" ./cmd/agent-ls) && export AGENT_LS_BIN="$work/agent-ls"
fi

# VS Code extension.
if command -v npm >/dev/null 2>&1; then
  (
    cd vscode
    npm ci --no-audit --no-fund --loglevel=error
    npm run --silent lint
    npm run --silent package >/dev/null
    AGENT_LS_VSIX=agent-ls.vsix npm test
  )
else
  missing npm "VS Code extension"
fi

# Neovim.
if command -v nvim >/dev/null 2>&1; then
  mkdir -p "$work/nvim"
  AGENT_LS_LUA="$here/neovim/agent-ls.lua" FAKE_SERVER="$here/test/fake-server.js" WORKDIR="$work/nvim" \
    timeout 120 nvim --headless -u NONE -i NONE -n -c "luafile $here/neovim/test/agent-ls_test.lua" 2>"$work/nvim.err" \
    || { cat "$work/nvim.err" >&2; echo "editors: neovim test failed" >&2; exit 1; }
  echo
else
  missing nvim Neovim
fi

# Emacs + Eglot.
if command -v emacs >/dev/null 2>&1 && emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1; then
  mkdir -p "$work/emacs"
  FAKE_SERVER="$here/test/fake-server.js" WORKDIR="$work/emacs" \
    timeout 120 emacs --batch -L "$here/emacs" -l "$here/emacs/test/agent-ls-test.el" -f ert-run-tests-batch-and-exit \
    >"$work/emacs.out" 2>&1 || { cat "$work/emacs.out" >&2; echo "editors: emacs test failed" >&2; exit 1; }
  grep -E '^Ran [0-9]+ tests' "$work/emacs.out"
else
  missing "emacs with eglot" Emacs
fi
