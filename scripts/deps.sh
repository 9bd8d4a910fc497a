#!/usr/bin/env bash
# Installs what `make test` needs on a fresh machine. Under CI=true a missing
# prerequisite that cannot be installed is a failure, never a skip.
set -euo pipefail
cd "$(dirname "$0")/.."

go mod download

# The language server's end-to-end clients (test/e2e): Neovim >= 0.7 from
# apt, and vscode-jsonrpc + vscode-languageserver-protocol from the lockfile.
need_fail() {
	if [ "${CI:-}" = "true" ]; then
		echo "deps: $1" >&2
		exit 1
	fi
	echo "deps: warning: $1 (the e2e tests will skip)" >&2
}
if ! command -v nvim >/dev/null 2>&1; then
	if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null) || need_fail "cannot install neovim with apt-get"
	else
		need_fail "nvim is missing and apt-get (as root) is not available to install it"
	fi
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	need_fail "node and npm are needed for test/e2e"
elif [ ! -f test/e2e/node_modules/vscode-languageserver-protocol/package.json ] \
	|| [ test/e2e/package-lock.json -nt test/e2e/node_modules/.package-lock.json ]; then
	(cd test/e2e && npm ci --no-audit --no-fund --loglevel=error) || need_fail "npm ci in test/e2e failed"
fi

# Prerequisites of other phases of make test (a PostgreSQL cluster, a
# headless browser, ...): each scripts/deps.d/NAME.sh is sourced here, with
# need_fail to call when something is missing (it exits 1 under CI=true).
for f in scripts/deps.d/*.sh; do
	[ -e "$f" ] || continue
	# shellcheck source=/dev/null
	. "$f"
done
