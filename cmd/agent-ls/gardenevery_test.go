package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bgRun is the built binary running in the background, its stdout and
// stderr lines on channels.
type bgRun struct {
	t        *testing.T
	cmd      *exec.Cmd
	out, err chan string
	done     chan int
}

// startBin starts the built agent-ls in dir with extra environment.
func startBin(t *testing.T, dir string, extraEnv []string, args ...string) *bgRun {
	t.Helper()
	cmd := exec.Command(agentLSBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), extraEnv...)
	so, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	se, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &bgRun{t: t, cmd: cmd, out: make(chan string, 4096), err: make(chan string, 4096), done: make(chan int, 1)}
	pump := func(s *bufio.Scanner, ch chan string, fin chan struct{}) {
		for s.Scan() {
			ch <- s.Text()
		}
		close(ch)
		close(fin)
	}
	f1, f2 := make(chan struct{}), make(chan struct{})
	go pump(bufio.NewScanner(so), r.out, f1)
	go pump(bufio.NewScanner(se), r.err, f2)
	go func() {
		<-f1
		<-f2
		_ = cmd.Wait()
		r.done <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	return r
}

// line waits for the next line of ch matching want (the lines before it
// are returned too, in order).
func (r *bgRun) line(ch chan string, what string, want func(string) bool) (string, []string) {
	r.t.Helper()
	var skipped []string
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-ch:
			if !ok {
				r.t.Fatalf("%s: the output ended (seen %q)", what, skipped)
			}
			if want(l) {
				return l, skipped
			}
			skipped = append(skipped, l)
		case <-deadline:
			r.t.Fatalf("%s: no such line within 60s (seen %q)", what, skipped)
		}
	}
}

// interrupt sends SIGINT and waits for the exit code; rest are the stdout
// lines not read yet.
func (r *bgRun) interrupt() (code int, rest []string) {
	r.t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		r.t.Fatal(err)
	}
	for l := range r.out {
		rest = append(rest, l)
	}
	select {
	case code = <-r.done:
	case <-time.After(60 * time.Second):
		r.t.Fatal("no exit within 60s of SIGINT")
	}
	return code, rest
}

func decodePass(t *testing.T, line string) gardenPassLine {
	t.Helper()
	var p gardenPassLine
	if err := json.Unmarshal([]byte(line), &p); err != nil {
		t.Fatalf("pass line %q: %v", line, err)
	}
	return p
}

var fastGarden = []string{"USER=ana", minEveryEnv + "=100ms"}

// TestGardenEvery: --every gardens on a schedule, a JSON line per pass
// that parses, re-running the eval of the earned promotion at every pass
// (as often per pass as a one-shot garden does); SIGINT ends it with exit
// 0; a bad or too short --every is exit 2; the text format prints a line
// per pass.
func TestGardenEvery(t *testing.T) {
	t.Parallel()
	script, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "eval", "check-prompt.sh"))
	cases, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "eval", "deploy-cases.txt"))
	dir := t.TempDir()
	counter := filepath.Join(dir, "eval-runs")
	wrapper := filepath.Join(dir, "eval.sh")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\necho run >> "+counter+"\nexec sh "+script+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := newEvoWorkspace(t, "eval:\n  command: [sh, "+wrapper+", "+cases+"]\n  timeout: 30s\n")
	eng := w.engine("deploy-ops", nil)
	payload := `{"scenario":"A deploy's migration locks the orders table and checkout times out.",` +
		`"good":"Stop the rollout, kill the migration, and rerun it off-peak with a lock timeout.",` +
		`"bad":"Let the migration finish while checkout is down."}`
	res := w.save(eng, "Failed deploy: a migration locked the orders table", "example.deploy", "conv-9", payload)
	wantCode(t, w.cli("promote", res.Record.ID, "--actor", "agent:deploy-ops"), 0, "eval-gated promote")
	evalRuns := func() int {
		data, _ := os.ReadFile(counter)
		return strings.Count(string(data), "run")
	}
	before := evalRuns()
	wantCode(t, w.cli("garden", "--scope", "project=atlas,agent=deploy-ops"), 0, "one-shot garden")
	perPass := evalRuns() - before
	if perPass == 0 {
		t.Fatal("a one-shot garden ran no eval on the earned promotion")
	}

	before = evalRuns()
	r := startBin(t, w.dir, fastGarden, "garden", "--scope", "project=atlas,agent=deploy-ops", "--every", "200ms", "--format", "json")
	for i := 1; i <= 3; i++ {
		l, skipped := r.line(r.out, "pass line", func(string) bool { return true })
		if len(skipped) > 0 {
			t.Fatalf("skipped %q", skipped)
		}
		p := decodePass(t, l)
		if p.Pass != i || !p.Gardened || len(p.Reports) != 1 || p.Reports[0].Agent != "deploy-ops" || p.Reports[0].Promoted != 1 {
			t.Fatalf("pass %d: %s", i, l)
		}
	}
	code, rest := r.interrupt()
	if code != 0 {
		t.Fatalf("SIGINT: exit %d, want 0", code)
	}
	passes := 3
	for _, l := range rest {
		if p := decodePass(t, l); p.Gardened {
			passes++
		}
	}
	if got := evalRuns() - before; got != passes*perPass {
		t.Errorf("%d passes ran the eval %d times, want %d (%d a pass)", passes, got, passes*perPass, perPass)
	}

	// Text: a line per pass.
	r = startBin(t, w.dir, fastGarden, "garden", "--every", "200ms")
	for i := 1; i <= 2; i++ {
		l, _ := r.line(r.out, "text pass line", func(string) bool { return true })
		if !strings.HasPrefix(l, fmt.Sprintf("pass %d ", i)) || !strings.Contains(l, "1 agent,") {
			t.Errorf("text pass line %q", l)
		}
	}
	if code, _ := r.interrupt(); code != 0 {
		t.Errorf("SIGINT (text): exit %d", code)
	}

	for _, args := range [][]string{{"--every", "10ms"}, {"--every", "soon"}, {"--every", "-1s"}} {
		r := runBin(t, w.dir, "", []string{"USER=ana"}, append([]string{"garden"}, args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "--every") {
			t.Errorf("garden %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	// The minimum without the test override is a second.
	r2 := runBin(t, w.dir, "", []string{"USER=ana"}, "garden", "--every", "500ms")
	if r2.code != exitUsage || !strings.Contains(r2.stderr, "at least 1s") {
		t.Errorf("garden --every 500ms: exit %d, stderr %q", r2.code, r2.stderr)
	}
}

// TestGardenEveryPostgresOneRunner: two runners on one PostgreSQL store
// (child processes, --every 200ms): the first takes the garden lock and
// gardens every pass; the second says on stderr, once a pass, that the
// first (its pid) holds it, and skips every pass (its JSON lines say so)
// while the first runs; SIGINT ends the first with exit 0, and the second
// then takes the lock and gardens; SIGINT ends it with exit 0.
func TestGardenEveryPostgresOneRunner(t *testing.T) {
	t.Parallel()
	dir, _ := pgWorkspace(t)
	cliOK(t, dir, "memory", "init")
	cliOK(t, dir, "memory", "save", "--scope", "user=u1,agent=deploy-ops", "--target", "background.projectContext.deploy_window",
		"--conversation", "c1", "--actor", "agent:deploy-ops", "Deploys go out Tuesdays after 14:00 ET")
	args := []string{"garden", "--every", "200ms", "--format", "json"}

	a := startBin(t, dir, fastGarden, args...)
	apid := fmt.Sprintf("pid %d", a.cmd.Process.Pid)
	if l, _ := a.line(a.err, "first runner takes the lock", func(l string) bool { return strings.Contains(l, "took the garden lock") }); !strings.Contains(l, apid) {
		t.Errorf("took line %q does not name %s", l, apid)
	}
	if l, _ := a.line(a.out, "first runner's first pass", func(string) bool { return true }); !decodePass(t, l).Gardened {
		t.Fatalf("first runner's first pass: %s", l)
	}

	b := startBin(t, dir, fastGarden, args...)
	for i := 1; i <= 3; i++ {
		l, skipped := b.line(b.err, "second runner waits", func(l string) bool { return strings.Contains(l, "waiting") })
		if len(skipped) > 0 || !strings.Contains(l, apid) || !strings.Contains(l, "skipping this pass") {
			t.Errorf("waiting line %q (before it %q) does not name %s", l, skipped, apid)
		}
		ol, skipped := b.line(b.out, "second runner's pass line", func(string) bool { return true })
		if p := decodePass(t, ol); len(skipped) > 0 || p.Pass != i || p.Gardened || !strings.Contains(p.WaitingFor, apid) || p.Error != "" {
			t.Errorf("second runner's pass %d: %s", i, ol)
		}
	}
	// Meanwhile the first gardened every pass.
	for i := 0; i < 2; i++ {
		if l, _ := a.line(a.out, "first runner's pass", func(string) bool { return true }); !decodePass(t, l).Gardened {
			t.Errorf("first runner skipped a pass while holding the lock: %s", l)
		}
	}
	code, rest := a.interrupt()
	if code != 0 {
		t.Fatalf("first runner: SIGINT exit %d", code)
	}
	for _, l := range rest {
		if p := decodePass(t, l); !p.Gardened || len(p.Reports) != 1 {
			t.Errorf("first runner's pass: %s", l)
		}
	}

	// The second takes over at its next pass.
	b.line(b.err, "second runner takes the lock", func(l string) bool { return strings.Contains(l, "took the garden lock") })
	l, skipped := b.line(b.out, "second runner gardens", func(l string) bool { return decodePass(t, l).Gardened })
	for _, s := range skipped {
		if p := decodePass(t, s); p.Gardened || p.WaitingFor == "" {
			t.Errorf("second runner's pass before the takeover: %s", s)
		}
	}
	if p := decodePass(t, l); len(p.Reports) != 1 || p.Reports[0].Agent != "deploy-ops" {
		t.Errorf("second runner's pass: %s", l)
	}
	if code, _ := b.interrupt(); code != 0 {
		t.Fatalf("second runner: SIGINT exit %d", code)
	}
}

// TestGardenEveryZero: --every 0 is below the minimum like any short
// interval (docs/COMMANDS.md: "--every below 1s ... is exit 2"). It was
// taken for no --every at all: one pass, its report, exit 0, where the
// user asked for a schedule.
func TestGardenEveryZero(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, every := range []string{"0", "0s", "0h0m"} {
		r := runBin(t, dir, "", []string{"USER=ana"}, "garden", "--every", every)
		if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, "--every 0s: want at least 1s") {
			t.Errorf("garden --every %s: exit %d, stdout %q, stderr %q; want 2 and the minimum", every, r.code, r.stdout, r.stderr)
		}
	}
}
