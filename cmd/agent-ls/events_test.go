package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/events"
)

// TestMemoryEventsFollow: `memory events --follow --format json` in one
// process prints, as JSON lines, the events of writes other processes make
// from the moment it starts (the store's history is not replayed), without
// content; `memory events` without --follow prints the whole history, and
// `--follow --since` prints the history since then before the live events.
func TestMemoryEventsFollow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "memory.db")
	save := func(content string) string {
		t.Helper()
		r := runBin(t, dir, "", nil, "memory", "--store", db, "--format", "json", "save", "--actor", "agent:bot",
			"--scope", "agent=bot", "--kind", "fact", "--content", content)
		if r.code != 0 {
			t.Fatalf("save: %d %s", r.code, r.stderr)
		}
		var res struct {
			Record struct{ ID string } `json:"record"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("save output %q: %v", r.stdout, err)
		}
		return res.Record.ID
	}
	old := save("SECRET history before the follower")

	follow := func(args ...string) (next func(what string, wait time.Duration) (events.Event, bool), stderr *strings.Builder) {
		t.Helper()
		follower := exec.Command(agentLSBin, append([]string{"memory", "--store", db, "events", "--follow", "--format", "json", "--actor", "human:ana"}, args...)...)
		follower.Dir = dir
		out, err := follower.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stderr = &strings.Builder{}
		follower.Stderr = stderr
		if err := follower.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = follower.Process.Kill(); _ = follower.Wait() })
		lines := make(chan string, 16)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		next = func(what string, wait time.Duration) (events.Event, bool) {
			t.Helper()
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("follower ended before %s; stderr: %s", what, stderr.String())
				}
				if strings.Contains(l, "SECRET") {
					t.Fatalf("event carries content: %s", l)
				}
				var ev events.Event
				if err := json.Unmarshal([]byte(l), &ev); err != nil {
					t.Fatalf("%s: not a JSON line: %q", what, l)
				}
				return ev, true
			case <-time.After(wait):
				return events.Event{}, false
			}
		}
		return next, stderr
	}

	// With --since, the history comes first.
	nextSince, stderrSince := follow("--since", "1h")
	if ev, ok := nextSince("history", 15*time.Second); !ok || ev.RecordID != old {
		t.Fatalf("--follow --since 1h: first event %+v (%v), want the save of %s; stderr: %s", ev, ok, old, stderrSince)
	}

	next, stderr := follow()
	// The follower is ready once it prints an event: save probes until one
	// arrives (a probe saved before it started is, rightly, not printed).
	var ids []string
	var first events.Event
	for i := 0; ; i++ {
		ids = append(ids, save(fmt.Sprintf("SECRET probe %d", i)))
		if ev, ok := next("a probe", 300*time.Millisecond); ok {
			first = ev
			break
		}
		if i == 50 {
			t.Fatalf("no event for 50 saves; stderr: %s", stderr)
		}
	}
	if first.RecordID == old || !slices.Contains(ids, first.RecordID) {
		t.Fatalf("first followed event %+v: want a save made after the follower started, not the history (%s)", first, old)
	}
	// Later probes the follower saw may still be in the pipe: drain to the last.
	for first.RecordID != ids[len(ids)-1] {
		ev, ok := next("the later probes", 15*time.Second)
		if !ok {
			t.Fatalf("probes %v: the follower stopped at %s; stderr: %s", ids, first.RecordID, stderr)
		}
		first = ev
	}
	for i := range 2 {
		id := save("SECRET fact " + string(rune('a'+i)))
		ev, ok := next("save "+id, 15*time.Second)
		if !ok || ev.Type != events.Write || ev.RecordID != id || ev.Agent != "bot" || ev.Actor != "agent:bot" || ev.Seq == 0 {
			t.Fatalf("event %+v (%v) for save of %s; stderr: %s", ev, ok, id, stderr)
		}
	}
	r := runBin(t, dir, "", nil, "memory", "--store", db, "invalidate", old, "--reason", "wrong", "--actor", "human:ana")
	if r.code != 0 {
		t.Fatalf("invalidate: %d %s", r.code, r.stderr)
	}
	if ev, ok := next("invalidate", 15*time.Second); !ok || ev.Type != events.Invalidate || ev.RecordID != old || ev.Actor != "human:ana" {
		t.Fatalf("invalidate event %+v (%v)", ev, ok)
	}

	// The whole history without --follow; another agent sees none of it.
	want := 1 + len(ids) + 2 + 1
	r = runBin(t, dir, "", nil, "memory", "--store", db, "--format", "json", "events", "--actor", "human:ana")
	if got := strings.Count(r.stdout, "\n"); r.code != 0 || got != want {
		t.Fatalf("events: code %d, %d lines (want %d):\n%s%s", r.code, got, want, r.stdout, r.stderr)
	}
	r = runBin(t, dir, "", nil, "memory", "--store", db, "--format", "json", "events", "--actor", "agent:other")
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("events for agent:other: code %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
