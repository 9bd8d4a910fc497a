package lens_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBrowser runs lens.e2e.js (testdata/e2e) in Debian's headless Chromium
// through playwright-core against `agent-ls lens` started as a child
// process over a workspace the CLI filled (children too). Screenshots go
// to the test's artifact directory (go test -artifacts keeps them). Under
// CI=true a missing prerequisite (node, /usr/bin/chromium, the npm
// packages: make deps installs them) fails the test; elsewhere it skips.
func TestBrowser(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("browser end-to-end test (-short)")
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	node, err := exec.LookPath("node")
	require(t, err == nil, "node")
	_, err = os.Stat(chromium)
	require(t, err == nil, chromium+" (apt-get install chromium)")
	_, err = os.Stat("testdata/e2e/node_modules/playwright-core/package.json")
	require(t, err == nil, "playwright-core (npm ci in lens/testdata/e2e)")

	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "agent-ls")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "../cmd/agent-ls")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build agent-ls: %v\n%s", err, out)
	}
	ws := filepath.Join(tmp, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	agent, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"deploy.agent.yaml": agent, ".agent-ls.yaml": []byte("scope:\n  project: atlas\n")} {
		if err := os.WriteFile(filepath.Join(ws, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	envv := append(os.Environ(), "USER=ana")
	cli := func(args ...string) []byte {
		t.Helper()
		c := exec.CommandContext(ctx, bin, args...)
		c.Dir, c.Env = ws, envv
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil {
			t.Fatalf("agent-ls %v: %v\n%s%s", args, err, out, stderr.String())
		}
		return out
	}
	save := func(actor, target, conv, content string) string {
		var out struct {
			Record struct{ ID string } `json:"record"`
		}
		if err := json.Unmarshal(cli("memory", "save", "--format", "json", "--scope", "project=atlas,agent=deploy-ops", "--actor", actor,
			"--target", target, "--conversation", conv, "--run", "run-"+conv, "--content", content), &out); err != nil {
			t.Fatal(err)
		}
		return out.Record.ID
	}
	save("agent:deploy-ops", "judgment.deploy.escalationTriggers", "c1", `<script>window.__pwned = 1; alert("x")</script> Page the on-call when a canary fails`)
	cli("promote", save("human:ana", "judgment.deploy.heuristics", "c2", "Always deploy on Fridays after the freeze"))
	save("agent:deploy-ops", "judgment.deploy.heuristics", "c3", "Never deploy on Fridays after the freeze")
	var ps struct {
		Proposals []struct{ ID string } `json:"proposals"`
	}
	if err := json.Unmarshal(cli("proposals", "--format", "json"), &ps); err != nil || len(ps.Proposals) != 1 {
		t.Fatalf("fixture proposals %+v %v", ps, err)
	}

	lens := exec.Command(bin, "lens")
	lens.Dir, lens.Env = ws, envv
	var lensErr bytes.Buffer
	lens.Stderr = &lensErr
	stdout, err := lens.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := lens.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		// The first line is the URL; the rest of stdout is drained.
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		urls <- strings.TrimSpace(line)
		_, _ = r.WriteTo(discard{})
		exited <- lens.Wait()
	}()
	var url string
	select {
	case url = <-urls:
	case <-ctx.Done():
		t.Fatal("agent-ls lens printed no URL")
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			lens.Process.Kill()
			<-exited
		}
	})
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Fatalf("first line %q, stderr %s", url, lensErr.String())
	}

	out := t.ArtifactDir()
	js := exec.CommandContext(ctx, node, "lens.e2e.js")
	js.Dir = "testdata/e2e"
	js.Env = append(os.Environ(), "LENS_URL="+url, "AGENT_LS="+bin, "WORKSPACE="+ws, "PROPOSAL="+ps.Proposals[0].ID,
		"OUT_DIR="+out, "CHROMIUM="+chromium)
	res, err := js.CombinedOutput()
	t.Logf("lens.e2e.js:\n%s", res)
	if err != nil {
		t.Fatalf("lens.e2e.js: %v (lens stderr: %s)", err, lensErr.String())
	}
	for _, shot := range []string{"landing.png", "live.png", "approved.png", "rejected.png", "agent.png", "timeline.png"} {
		if fi, err := os.Stat(filepath.Join(out, shot)); err != nil || fi.Size() == 0 {
			t.Errorf("screenshot %s: %v", shot, err)
		}
	}

	// SIGTERM ends the lens cleanly.
	stopped = true
	if err := lens.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("lens after SIGTERM: %v (%s)", err, lensErr.String())
		}
	case <-ctx.Done():
		lens.Process.Kill()
		t.Fatal("lens did not stop on SIGTERM")
	}
}

var urls = make(chan string, 1)

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// require fails (CI) or skips (elsewhere) when a prerequisite is missing.
func require(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("prerequisite missing under CI: %s (make deps installs it)", what)
	}
	t.Skipf("prerequisite missing: %s (run make deps)", what)
}
