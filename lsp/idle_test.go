package lsp

import (
	"encoding/json"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// fakeTimers stands in for time.AfterFunc: a test fires the timers armed.
type fakeTimers struct{ armed []*fakeTimer }

type fakeTimer struct {
	f       func()
	stopped bool
}

func (t *fakeTimer) Stop() bool { was := !t.stopped; t.stopped = true; return was }

func (ft *fakeTimers) afterFunc(_ time.Duration, f func()) interface{ Stop() bool } {
	t := &fakeTimer{f: f}
	ft.armed = append(ft.armed, t)
	return t
}

// fireAll runs every timer armed so far, stopped or not (a stopped
// time.AfterFunc timer may already have started its f).
func (ft *fakeTimers) fireAll() {
	armed := ft.armed
	ft.armed = nil
	for _, t := range armed {
		t.f()
	}
}

// TestIdleWatch: fn runs once after the last work ends and the spell
// lasts; work begun before the timer fires, or still running, keeps it
// from running; it runs again only after new work.
func TestIdleWatch(t *testing.T) {
	t.Parallel()
	calls := 0
	ft := &fakeTimers{}
	w := newIdleWatch(time.Second, func() { calls++ })
	w.afterFunc = ft.afterFunc
	step := func(name string, do func(), want int) {
		t.Helper()
		do()
		if calls != want {
			t.Fatalf("%s: fn ran %d times, want %d", name, calls, want)
		}
	}
	step("one job ends", func() { w.begin(); w.end() }, 0)
	step("its spell ends", ft.fireAll, 1)
	step("no new work, a stale timer", func() { ft.fireAll() }, 1)
	step("two jobs, one ends", func() { w.begin(); w.begin(); w.end() }, 1)
	if len(ft.armed) != 0 {
		t.Fatalf("a timer armed while a job still runs")
	}
	step("the other ends, new work before the spell ends", func() { w.end(); w.begin() }, 1)
	step("the first spell's timer fires late", ft.fireAll, 1)
	step("the work ends, its spell ends", func() { w.end(); ft.fireAll() }, 2)
	if newIdleWatch(0, func() {}) != nil || newIdleWatch(time.Second, nil) != nil {
		t.Error("a watch without fn or a positive spell")
	}
	var none *idleWatch
	none.begin()
	none.end()
}

// TestServeCallsIdle: over the wire, the server calls Options.Idle once a
// document's diagnostics are out and nothing else comes, and again after
// more work.
func TestServeCallsIdle(t *testing.T) {
	t.Parallel()
	idle := make(chan struct{}, 8)
	env := newTestEnv(t)
	c := startServer(t, Options{NoWatch: true, Idle: func() { idle <- struct{}{} }, IdleAfter: time.Millisecond})
	drain := func() {
		for len(idle) > 0 {
			<-idle
		}
	}
	wait := func(what string) {
		t.Helper()
		select {
		case <-idle:
		case <-time.After(failsafe):
			t.Fatalf("no Idle call within %s after %s", failsafe, what)
		}
	}
	c.initialize(env.root, nil, false)
	wait("initialize")
	drain()
	path := env.write(t, "a.agent.yaml", "name: [\n")
	uri := c.open(path, "name: [\n", 1)
	c.awaitDiagnostics(uri, 1)
	wait("a didOpen")
	drain()
	var outline json.RawMessage
	c.call(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": uri}}, &outline)
	wait("a documentSymbol request")
}
