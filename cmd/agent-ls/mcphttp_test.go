package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// httpServer is a running `agent-ls mcp --http` child.
type httpServer struct {
	url    string
	cmd    *exec.Cmd
	stderr *strings.Builder
	done   chan error
}

// startHTTP starts agent-ls mcp --http args... in a workspace holding the
// support agent and returns it once it printed its URL.
func startHTTP(t *testing.T, dir string, args ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(agentLSBin, append([]string{"mcp", "--http"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &httpServer{cmd: cmd, stderr: &strings.Builder{}, done: make(chan error, 1)}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, out)
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("mcp --http ended before its URL: %v\n%s", <-s.done, s.stderr)
		}
		s.url = l
	case <-time.After(20 * time.Second):
		t.Fatalf("no URL within 20s\n%s", s.stderr)
	}
	return s
}

func httpWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "agents", "support.agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "support.agent.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func do(t *testing.T, c *http.Client, method, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

// TestMCPHTTPChild: the built binary's `mcp --http 127.0.0.1:0` prints its
// endpoint URL first, answers /healthz without a token, refuses a request
// without a token or with a bad one (401 and WWW-Authenticate: Bearer, no
// data), a wrong Host (421), a cross-site Origin (403) and a body over the
// stdio message limit (413), and exits 0 on SIGTERM.
func TestMCPHTTPChild(t *testing.T) {
	t.Parallel()
	s := startHTTP(t, httpWorkspace(t), "127.0.0.1:0")
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") || !strings.HasSuffix(s.url, "/mcp") {
		t.Fatalf("first line %q, want http://127.0.0.1:PORT/mcp", s.url)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, body := do(t, c, http.MethodGet, strings.TrimSuffix(s.url, "/mcp")+"/healthz", "", nil)
	if resp.StatusCode != 200 || strings.TrimSpace(body) != "ok" {
		t.Fatalf("healthz: %d %q", resp.StatusCode, body)
	}
	for _, tt := range []struct {
		name   string
		hdr    map[string]string
		body   string
		status int
		auth   string
	}{
		{"no token", nil, initialize, 401, `Bearer realm="agent-ls"`},
		{"bad token", map[string]string{"Authorization": "Bearer als_not_a_token"}, initialize, 401, `Bearer realm="agent-ls", error="invalid_token"`},
		{"wrong host", map[string]string{"Host": "attacker.example"}, initialize, 421, ""},
		{"cross-site origin", map[string]string{"Origin": "https://attacker.example"}, initialize, 403, ""},
		{"body over the message limit", nil, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 2<<20) + `"}}`, 413, ""},
	} {
		resp, body := do(t, c, http.MethodPost, s.url, tt.body, tt.hdr)
		if resp.StatusCode != tt.status || resp.Header.Get("WWW-Authenticate") != tt.auth {
			t.Errorf("%s: %d %q, want %d %q", tt.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tt.status, tt.auth)
		}
		if strings.Contains(body, "jsonrpc") || strings.Contains(body, "support-bot") {
			t.Errorf("%s: the refusal carries data: %s", tt.name, body)
		}
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, s.stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no exit within 15s of SIGTERM")
	}
	logs := s.stderr.String()
	for _, want := range []string{"outcome=no_token", "outcome=invalid_token", "outcome=host_refused", "outcome=origin_refused", "outcome=too_large", "latency="} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "als_not_a_token") {
		t.Errorf("a secret reached the log:\n%s", logs)
	}
}

// TestMCPHTTPRefusesClearTextBeyondLoopback: a non-loopback address without
// --tls-cert and --tls-key exits 2 saying why; --http with an agent file
// is a usage error; an HTTP flag without --http too.
func TestMCPHTTPRefusesClearTextBeyondLoopback(t *testing.T) {
	t.Parallel()
	dir := httpWorkspace(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--http", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"mcp", "--http", ":0"}, "not a loopback address"},
		{[]string{"mcp", "--http", "0.0.0.0:0", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"mcp", "--http", "127.0.0.1:0", "support.agent.yaml"}, "a request's token decides the agent"},
		{[]string{"mcp", "support.agent.yaml", "--allowed-host", "x"}, "--allowed-host goes with --http"},
	} {
		cmd := exec.Command(agentLSBin, tt.args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), tt.want) {
			t.Errorf("%v: %v\n%s\nwant exit 2 and %q", tt.args, err, out, tt.want)
		}
	}
}

// TestMCPHTTPTLS: with a self-signed certificate (made here) a non-loopback
// address is served over TLS: the URL is https, a client trusting the
// certificate gets /healthz and a 401 for /mcp without a token.
func TestMCPHTTPTLS(t *testing.T) {
	t.Parallel()
	dir := httpWorkspace(t)
	certFile, keyFile, pool := selfSigned(t, dir)
	s := startHTTP(t, dir, "0.0.0.0:0", "--tls-cert", certFile, "--tls-key", keyFile, "--allowed-host", "127.0.0.1")
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("first line %q, want https", s.url)
	}
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(s.url, "https://"), "/mcp"))
	base := "https://127.0.0.1:" + port
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, body := do(t, c, http.MethodGet, base+"/healthz", "", nil)
	if resp.StatusCode != 200 || resp.TLS == nil || strings.TrimSpace(body) != "ok" {
		t.Fatalf("healthz over TLS: %d %q", resp.StatusCode, body)
	}
	if resp, _ := do(t, c, http.MethodPost, base+"/mcp", initialize, nil); resp.StatusCode != 401 {
		t.Fatalf("/mcp without a token over TLS: %d", resp.StatusCode)
	}
	// Clear text to the TLS port is no MCP answer.
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://127.0.0.1:" + port + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("clear text served on the TLS port")
		}
	}
}

func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agent-ls test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestMCPHTTPTokenRevokedOnEveryServer: a token made by `agent-ls token
// create` is served by two `mcp --http` processes on one store; after
// `agent-ls token revoke`, the next request to either is 401
// invalid_token, and the log names the token's id and why, never the
// secret.
func TestMCPHTTPTokenRevokedOnEveryServer(t *testing.T) {
	t.Parallel()
	dir := httpWorkspace(t)
	cli := func(args ...string) string {
		cmd := exec.Command(agentLSBin, args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "USER=ops")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("agent-ls %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	secret := strings.SplitN(cli("token", "create", "--agent", "support.agent.yaml", "--name", "child"), "\n", 2)[0]
	servers := []*httpServer{startHTTP(t, dir, "127.0.0.1:0"), startHTTP(t, dir, "127.0.0.1:0")}
	c := &http.Client{Timeout: 10 * time.Second}
	auth := map[string]string{"Authorization": "Bearer " + secret}
	for i, s := range servers {
		resp, body := do(t, c, http.MethodPost, s.url, initialize, auth)
		if resp.StatusCode != 200 || !strings.Contains(body, `"result"`) || !strings.Contains(body, "support-bot") {
			t.Fatalf("server %d with the token: %d %s\n%s", i, resp.StatusCode, body, s.stderr)
		}
	}
	cli("token", "revoke", secret)
	for i, s := range servers {
		resp, body := do(t, c, http.MethodPost, s.url, initialize, auth)
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Bearer realm="agent-ls", error="invalid_token"` || strings.Contains(body, "jsonrpc") {
			t.Errorf("server %d after revoke: %d %q %s", i, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		<-s.done
		log := s.stderr.String()
		if strings.Contains(log, secret) {
			t.Errorf("server %d logged the secret", i)
		}
		if !strings.Contains(log, "outcome=invalid_token") || !strings.Contains(log, "revoked") || !strings.Contains(log, "token=tok_") {
			t.Errorf("server %d's log lacks the refusal's token id or reason:\n%s", i, log)
		}
		if strings.Contains(log, "invalid token: invalid token") {
			t.Errorf("server %d's log words the refusal twice:\n%s", i, log)
		}
	}
}

// TestMCPHTTPRefusesNonPositiveLimits: --max-agents and the timeouts of
// --http must be positive: `--read-header-timeout 0` served with no header
// timeout at all (a slow client holds a connection forever), a negative
// duration or --max-agents -5 was taken silently (-5 meant the default 64).
// Each is exit 2 naming the flag, before anything listens. The guard
// timeout only ends a server that wrongly started.
func TestMCPHTTPRefusesNonPositiveLimits(t *testing.T) {
	t.Parallel()
	dir := httpWorkspace(t)
	for _, tt := range []struct{ flag, value, want string }{
		{"--max-agents", "0", "--max-agents 0: want a positive number"}, {"--max-agents", "-5", "--max-agents -5: want a positive number"},
		{"--read-header-timeout", "0s", `--read-header-timeout: invalid value "0s": want a positive duration`},
		{"--idle-timeout", "-1s", `--idle-timeout: invalid value "-1s": want a positive duration`},
		{"--write-timeout", "0s", `--write-timeout: invalid value "0s": want a positive duration`},
		{"--shutdown-timeout", "-3s", `--shutdown-timeout: invalid value "-3s": want a positive duration`},
	} {
		t.Run(tt.flag+"="+tt.value, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, agentLSBin, "mcp", "--http", "127.0.0.1:0", tt.flag, tt.value)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(string(out), tt.want) || strings.Contains(string(out), "http://") {
				t.Errorf("%v\n%s\nwant exit 2 and %q, and nothing served", err, out, tt.want)
			}
		})
	}
}

// TestMCPHTTPAgentFileChanged: a token serves its agent file only while the
// file names the token's agent. Once a human renames the agent
// (roleTemplate.name) or removes its file, every request of the token is
// refused (403, nothing served) at once, as docs/SERVICE.md says, even on a
// server that already served that file (whose cached server answered
// memory_list for the old agent until the process restarted); with the file
// back, the token serves again.
func TestMCPHTTPAgentFileChanged(t *testing.T) {
	t.Parallel()
	dir := httpWorkspace(t)
	secret, _, r := createTokenCLI(t, dir, "--agent", "support.agent.yaml")
	if r.code != 0 {
		t.Fatalf("token create: %d %s", r.code, r.stderr)
	}
	s := startHTTP(t, dir, "127.0.0.1:0")
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_list","arguments":{}}}`
	hdr := map[string]string{"Authorization": "Bearer " + secret}
	status := func(what string, want int) {
		t.Helper()
		resp, body := do(t, http.DefaultClient, "POST", s.url, list, hdr)
		if resp.StatusCode != want {
			t.Errorf("%s: status %d, want %d\n%s", what, resp.StatusCode, want, body)
		}
		if want != http.StatusOK && strings.Contains(body, "records") {
			t.Errorf("%s: a refused request carries data: %s", what, body)
		}
	}
	status("the token's file", http.StatusOK)

	path := filepath.Join(dir, "support.agent.yaml")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.Replace(string(orig), "name: support-bot", "name: support-bot-v2", 1)
	if err := os.WriteFile(path, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	status("the agent renamed", http.StatusForbidden)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	status("the agent file removed", http.StatusForbidden)
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	status("the agent file back", http.StatusOK)
}
