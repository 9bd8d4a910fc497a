#!/usr/bin/env bash
# Retakes the README's lens screenshot (docs/images/lens.png) from `make
# demo`'s data: runs scripts/demo.sh into a throwaway directory (KEEP_DEMO=1),
# serves `agent-ls lens` on loopback over that workspace, and has headless
# Chromium photograph the agent page (the composed prompt, formatted, its
# learned lines highlighted with their record, conversations and tier).
#
#   bash scripts/lens-screenshot.sh [OUT]     (default docs/images/lens.png)
#
# AGENT_LS overrides the binary (default: built into the temp directory);
# CHROMIUM the browser (default: chromium on PATH, else /usr/bin/chromium;
# Debian: apt-get install chromium); SIZE the window (default 1280,1560).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out=${1:-$repo/docs/images/lens.png}
size=${SIZE:-1280,1560}

chromium=${CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}
if [[ ! -x $chromium ]]; then
	echo "lens-screenshot: no Chromium at $chromium (apt-get install chromium, or set CHROMIUM)" >&2
	exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/agent-ls-lens-shot.XXXXXX")
lens_pid=
cleanup() {
	if [[ -n $lens_pid ]]; then
		kill "$lens_pid" 2>/dev/null || true
		wait "$lens_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

if [[ -z ${AGENT_LS:-} ]]; then
	go build -o "$tmp/agent-ls" ./cmd/agent-ls
	AGENT_LS=$tmp/agent-ls
fi
export AGENT_LS USER=${USER:-ana}

# The demo's workspace and store, kept in $tmp (make demo's own script).
mkdir -p "$tmp/demo"
TMPDIR=$tmp/demo KEEP_DEMO=1 bash scripts/demo.sh >"$tmp/demo.log" 2>&1 ||
	{ cat "$tmp/demo.log" >&2; exit 1; }
ws=$(find "$tmp/demo" -mindepth 1 -maxdepth 1 -type d -name 'agent-ls-demo.*' | head -1)
if [[ -z $ws || ! -f $ws/deploy.agent.yaml ]]; then
	echo "lens-screenshot: the demo left no workspace in $tmp/demo" >&2
	exit 1
fi

# The lens prints its URL (with the access token) as its first line.
(cd "$ws" && exec "$AGENT_LS" lens --addr 127.0.0.1:0 >"$tmp/lens.out" 2>"$tmp/lens.err") &
lens_pid=$!
url=
for _ in $(seq 100); do
	url=$(head -1 "$tmp/lens.out" 2>/dev/null || true)
	[[ $url == http://* ]] && break
	kill -0 "$lens_pid" 2>/dev/null || { cat "$tmp/lens.err" >&2; exit 1; }
	sleep 0.1
done
if [[ $url != http://* ]]; then
	echo "lens-screenshot: agent-ls lens printed no URL" >&2
	exit 1
fi
base=${url%%/\?*}
token=${url##*token=}

mkdir -p "$(dirname "$out")"
"$chromium" --headless --disable-gpu --no-sandbox --hide-scrollbars --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$tmp/chromium" --window-size="$size" --screenshot="$out" \
	"$base/agent?name=deploy-ops&token=$token" >"$tmp/chromium.log" 2>&1 ||
	{ cat "$tmp/chromium.log" >&2; exit 1; }
echo "lens-screenshot: wrote $out ($(wc -c <"$out") bytes) from $base/agent?name=deploy-ops"
