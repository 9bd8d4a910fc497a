package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestBatchGC(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want bool
	}{
		{"render", []string{"render", "a.agent.yaml"}, nil, true},
		{"version", []string{"version"}, nil, true},
		{"memory export", []string{"memory", "export"}, nil, true},
		{"no command", nil, nil, true},
		{"serve is long-running", []string{"serve", "--stdio"}, nil, false},
		{"mcp is long-running", []string{"mcp", "--agent", "a.agent.yaml"}, nil, false},
		{"GOGC set", []string{"render", "a.agent.yaml"}, map[string]string{"GOGC": "200"}, false},
		{"GOMEMLIMIT set", []string{"render", "a.agent.yaml"}, map[string]string{"GOMEMLIMIT": "1GiB"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := batchGC(tt.args, func(k string) string { return tt.env[k] })
			if got != tt.want {
				t.Errorf("batchGC(%q) = %v, want %v", tt.args, got, tt.want)
			}
		})
	}
}

// TestLongRunning: only the servers keep allocation sampling (serve
// writes a heap profile with --memprofile); GOGC and GOMEMLIMIT do not
// matter to it.
func TestLongRunning(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"serve", "--memprofile", "m.pprof"}, {"mcp"}} {
		if !longRunning(args) {
			t.Errorf("longRunning(%q) = false", args)
		}
	}
	for _, args := range [][]string{nil, {"render", "a.agent.yaml"}, {"version"}, {"memory", "serve"}} {
		if longRunning(args) {
			t.Errorf("longRunning(%q) = true", args)
		}
	}
}

// gcSettings reads the collector's percent and memory limit.
func gcSettings() (percent, limit int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

// TestStartBatchGCRestores: the collector is off with the limit set until
// the first collection, which restores the previous percent and lifts the
// limit.
func TestStartBatchGCRestores(t *testing.T) {
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	startBatchGC(512 << 20)
	p, l := gcSettings()
	if p != -1 {
		t.Fatalf("after startBatchGC: gogc %d, want off", p)
	}
	if l != 512<<20 {
		t.Fatalf("after startBatchGC: memory limit %d, want %d", l, 512<<20)
	}
	// The first collection restores the settings (cleanups run on their
	// own goroutine, soon after it).
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		if p, l = gcSettings(); p == 100 && l == math.MaxInt64 {
			return
		}
	}
	t.Fatalf("after a collection: gogc %d, memory limit %d; want 100 and no limit", p, l)
}

// TestReleaseFreeHeap: after a burst of garbage, the idle server's release
// hands the freed heap back (the runtime's held free heap drops below the
// threshold); with less than the threshold held it does not collect. Not
// parallel: it reads the process's heap, which parallel tests change.
func TestReleaseFreeHeap(t *testing.T) {
	var sink [][]byte
	for range 64 {
		sink = append(sink, make([]byte, 1<<20))
	}
	sink[0][0] = 1
	sink = nil
	runtime.GC()
	if held := heldFreeHeap(); held < releaseMinFree {
		t.Fatalf("after 64 MiB of garbage and a collection the runtime holds %d free bytes; want at least %d", held, releaseMinFree)
	}
	releaseFreeHeap()
	if held := heldFreeHeap(); held >= releaseMinFree {
		t.Errorf("after releaseFreeHeap the runtime still holds %d free bytes", held)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	releaseFreeHeap() // nothing held: no collection
	runtime.ReadMemStats(&after)
	if after.NumForcedGC != before.NumForcedGC {
		t.Errorf("releaseFreeHeap with %d free bytes held forced a collection", heldFreeHeap())
	}
}

// TestFollowLiveHeap: with a live heap above two thirds of the base limit,
// the collection after it raises the limit to one and a half times the
// live heap; once that heap is garbage, the next collection puts the base
// back; after stop nothing changes the limit. Not parallel: it sets the
// process's memory limit, which other tests read.
func TestFollowLiveHeap(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	const base = 16 << 20 // the package's other live heap stays well under base/1.5
	debug.SetMemoryLimit(base)
	limits := make(chan int64, 64)
	stop := followLiveHeap(base, func(l int64) {
		select {
		case limits <- l:
		default:
		}
	})
	// await collects until a limit satisfying ok is set (cleanups run on
	// their own goroutine after the collection).
	await := func(what string, ok func(int64) bool) int64 {
		t.Helper()
		deadline := time.After(20 * time.Second) // a failsafe, not a timing assertion
		for {
			runtime.GC()
			select {
			case l := <-limits:
				if ok(l) {
					return l
				}
			case <-deadline:
				t.Fatalf("no limit %s was set", what)
			}
		}
	}
	live := make([][]byte, 48)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	await("of 1.5x a 48 MiB live heap", func(l int64) bool { return l >= 72<<20 })
	// Later collections (await's own) may have re-set it since, each for
	// the heap then live, which still holds the 48 MiB.
	if _, got := gcSettings(); got < 72<<20 {
		t.Errorf("memory limit %d, want at least 1.5x the 48 MiB live", got)
	}
	runtime.KeepAlive(live)
	live = nil
	await("back at the base", func(l int64) bool { return l == base })
	stop()
	debug.SetMemoryLimit(base + 1)
	runtime.GC()
	runtime.GC()
	if _, got := gcSettings(); got != base+1 {
		t.Errorf("after stop the limit changed to %d", got)
	}
}
