package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/events"
)

// TestMemoryEventsFollow: `memory events --follow --format json` in one
// process prints, as JSON lines, the events of writes other processes make,
// without content; `memory events` without --follow prints the same history.
func TestMemoryEventsFollow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "memory.db")
	follower := exec.Command(agentLSBin, "memory", "--store", db, "events", "--follow", "--format", "json", "--actor", "human:ana")
	follower.Dir = dir
	out, err := follower.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	follower.Stderr = &stderr
	if err := follower.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = follower.Process.Kill(); _ = follower.Wait() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) events.Event {
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
			return ev
		case <-time.After(15 * time.Second):
			t.Fatalf("no event for %s within 15s; stderr: %s", what, stderr.String())
		}
		return events.Event{}
	}
	var ids []string
	for i := range 2 {
		r := runBin(t, dir, "", nil, "memory", "--store", db, "--format", "json", "save", "--actor", "agent:bot",
			"--scope", "agent=bot", "--kind", "fact", "--content", "SECRET fact "+string(rune('a'+i)))
		if r.code != 0 {
			t.Fatalf("save: %d %s", r.code, r.stderr)
		}
		var res struct {
			Record struct{ ID string } `json:"record"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("save output %q: %v", r.stdout, err)
		}
		ev := next("save " + res.Record.ID)
		if ev.Type != events.Write || ev.RecordID != res.Record.ID || ev.Agent != "bot" || ev.Actor != "agent:bot" || ev.Seq == 0 {
			t.Fatalf("event %+v for save of %s", ev, res.Record.ID)
		}
		ids = append(ids, res.Record.ID)
	}
	r := runBin(t, dir, "", nil, "memory", "--store", db, "invalidate", ids[0], "--reason", "wrong", "--actor", "human:ana")
	if r.code != 0 {
		t.Fatalf("invalidate: %d %s", r.code, r.stderr)
	}
	if ev := next("invalidate"); ev.Type != events.Invalidate || ev.RecordID != ids[0] || ev.Actor != "human:ana" {
		t.Fatalf("invalidate event %+v", ev)
	}

	// The same history without --follow; another agent sees none of it.
	r = runBin(t, dir, "", nil, "memory", "--store", db, "--format", "json", "events", "--actor", "human:ana")
	if got := strings.Count(r.stdout, "\n"); r.code != 0 || got != 3 {
		t.Fatalf("events: code %d, %d lines:\n%s%s", r.code, got, r.stdout, r.stderr)
	}
	r = runBin(t, dir, "", nil, "memory", "--store", db, "--format", "json", "events", "--actor", "agent:other")
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("events for agent:other: code %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
