package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// batchMemoryLimit is the heap a short command may grow to before its first
// collection (see batchGC). A cold render over 1k (and 100k) records stays
// under it; a command reading a whole big store reaches it and then
// collects as usual, so its peak memory stays what it was (with 256 MiB,
// `memory export` of 100k records peaked 100 MB higher).
const batchMemoryLimit = 64 << 20

// batchGC reports whether the command of args runs with the collector off
// until its heap reaches batchMemoryLimit: every command but the long-running
// servers (serve, mcp), unless GOGC or GOMEMLIMIT is set (the user's choice
// wins). A cold `agent-ls render` over 1k records allocates some tens of MB
// and spent about a fifth of its time collecting garbage it never needed to
// free before exiting.
func batchGC(args []string, getenv func(string) string) bool {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return false
	}
	return !longRunning(args)
}

// longRunning reports whether args run a server (serve, mcp) rather than a
// short command.
func longRunning(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "serve", "mcp":
		return true
	}
	return false
}

// noAllocProfile turns off the sampling of allocations for the heap
// profile in a short command, which never writes one (only serve does,
// with --memprofile): a cold render spent about 2% of its CPU recording
// the stacks of sampled allocations.
func noAllocProfile(args []string) {
	if !longRunning(args) {
		runtime.MemProfileRate = 0
	}
}

// startBatchGC turns the collector off with a memory limit of limit bytes.
// The first collection (the limit reached) restores the collector as it was
// and lifts the limit, so a command over a store too big for the limit runs
// as with the default settings instead of collecting at the limit over and
// over.
func startBatchGC(limit int64) {
	percent := debug.SetGCPercent(-1)
	prevLimit := debug.SetMemoryLimit(limit)
	sentinel := new(gcSentinel)
	runtime.AddCleanup(sentinel, func(int) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(prevLimit)
	}, 0)
}

// gcSentinel is unreachable from birth: its cleanup runs after the first
// collection. It holds a pointer so it is not a tiny allocation (those may
// share a block with live objects and never be cleaned up).
type gcSentinel struct{ _ *int }

// liveHeapFactor is how far above the live heap followLiveHeap keeps the
// memory limit: a live heap above limit/liveHeapFactor gets its own
// headroom instead of a limit it already exceeds.
const liveHeapFactor = 1.5

// followLiveHeap keeps the soft memory limit at base or, once the live heap
// (as the last collection measured it) is more than base/liveHeapFactor,
// at liveHeapFactor times it, re-set after every collection. A fixed limit
// below the live heap (the language server's 64 MiB with a store of a
// million records, whose live heap is 70-90 MB) had the collector run back
// to back, half the CPU, for as long as the server worked. set, when not
// nil, is told each limit set (tests). The returned stop ends the
// following and leaves the limit as it is.
func followLiveHeap(base int64, set func(limit int64)) (stop func()) {
	var mu sync.Mutex // held while setting: after stop returns, nothing sets
	stopped := false
	var arm func()
	arm = func() {
		runtime.AddCleanup(new(gcSentinel), func(int) {
			mu.Lock()
			defer mu.Unlock()
			if stopped {
				return
			}
			limit := limitForLive(base, liveHeap())
			debug.SetMemoryLimit(limit)
			if set != nil {
				set(limit)
			}
			arm()
		}, 0)
	}
	arm()
	return func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
	}
}

// limitForLive is followLiveHeap's limit for a live heap of live bytes.
func limitForLive(base int64, live uint64) int64 {
	return max(base, int64(float64(live)*liveHeapFactor))
}

// liveHeap is the heap the last collection found live, in bytes
// (runtime/metrics /gc/heap/live:bytes).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// serveIdleAfter is how long the language server waits, with every message
// handled and its background work done, before it returns freed heap to
// the system (releaseFreeHeap): an editor's idle server then shows its live
// memory instead of the high water of its last burst of work.
const serveIdleAfter = 500 * time.Millisecond

// releaseMinFree is the freed, still-held heap below which releaseFreeHeap
// does nothing: a forced collection for less is not worth its CPU.
const releaseMinFree = 4 << 20

// releaseFreeHeap returns the heap the collector has freed but the runtime
// still holds to the system (debug.FreeOSMemory: a collection, then every
// free page released) when there is at least releaseMinFree of it.
func releaseFreeHeap() {
	if heldFreeHeap() >= releaseMinFree {
		debug.FreeOSMemory()
	}
}

// heldFreeHeap is the runtime's free heap not yet returned to the system,
// in bytes (runtime/metrics /memory/classes/heap/free:bytes).
func heldFreeHeap() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
