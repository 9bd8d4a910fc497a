package engine

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/agent-ls/agent-ls/schema"
)

// maxConflictMemos bounds the agents a conflictMemo remembers (cleared
// when full).
const maxConflictMemos = 256

// conflictMemo remembers each agent's conflicts (Agent.ConflictsUntil) per
// state of the store file (SettledStamp) and of the agent file (its
// bytes' hash), until the first of their records expires or is
// invalidated: the lens's landing lists every agent's conflicts on each
// load, and a large store is read and analysed once per change rather than
// once per load. Callers asking for the same agent and file states while
// one reads them (two landings loaded at once) wait for its reading
// instead of reading again. A nil *conflictMemo remembers nothing; a store
// that is not a file is asked every time.
type conflictMemo struct {
	mu       sync.Mutex
	m        map[conflictOwner]conflictEntry
	inflight map[conflictOwner]*conflictRead
	// compute reads an agent's conflicts (nil: Agent.ConflictsUntil);
	// joined, when set, is told of a caller that waits for another's
	// reading (the tests' seams).
	compute func(ctx context.Context, eng *Agent) ([]Conflict, string, error)
	joined  func()
}

type conflictOwner struct{ path, agent string }

type conflictEntry struct {
	stamp StoreStamp
	file  [sha256.Size]byte
	until string // "" holds until the files change
	cs    []Conflict
}

// conflictRead is one running reading of an agent's conflicts; its
// results are set before done is closed.
type conflictRead struct {
	stamp StoreStamp
	file  [sha256.Size]byte
	done  chan struct{}
	cs    []Conflict
	until string
	ok    bool // read (not failed or cancelled)
}

// conflicts returns agent's conflicts as eng, over the store file at path
// and the agent file of bytes sum, reads them at now: remembered ones when
// both files are as they were and now is before their until, or those of
// a reading of the same states already running, else read and remembered
// when the store file was settled before and unchanged after the read.
// The conflicts are shared: never modify them.
func (m *conflictMemo) conflicts(ctx context.Context, eng *Agent, path, agent string, sum [sha256.Size]byte, now time.Time) ([]Conflict, error) {
	stamp, settled := SettledStamp(path, time.Now())
	if m == nil || !settled {
		cs, _, err := m.read(ctx, eng)
		return cs, err
	}
	owner := conflictOwner{path: path, agent: agent}
	nowS := schema.FormatTime(now)
	holds := func(until string) bool { return until == "" || nowS < until }
	m.mu.Lock()
	if e, hit := m.m[owner]; hit && e.stamp == stamp && e.file == sum && holds(e.until) {
		m.mu.Unlock()
		return e.cs, nil
	}
	if r := m.inflight[owner]; r != nil && r.stamp == stamp && r.file == sum {
		m.mu.Unlock()
		if m.joined != nil {
			m.joined()
		}
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if r.ok && holds(r.until) {
			return r.cs, nil
		}
		// It failed (its request ended) or no longer holds: read anew.
		cs, _, err := m.read(ctx, eng)
		return cs, err
	}
	r := &conflictRead{stamp: stamp, file: sum, done: make(chan struct{})}
	if m.inflight == nil {
		m.inflight = map[conflictOwner]*conflictRead{}
	}
	m.inflight[owner] = r
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		if m.inflight[owner] == r {
			delete(m.inflight, owner)
		}
		m.mu.Unlock()
		close(r.done)
	}()
	cs, until, err := m.read(ctx, eng)
	if err != nil {
		return nil, err
	}
	r.cs, r.until, r.ok = cs, until, true
	if after, _, ok := StampOf(path); ok && after == stamp {
		m.mu.Lock()
		if m.m == nil || len(m.m) >= maxConflictMemos {
			m.m = map[conflictOwner]conflictEntry{}
		}
		m.m[owner] = conflictEntry{stamp: stamp, file: sum, until: until, cs: cs}
		m.mu.Unlock()
	}
	return cs, nil
}

// read is m's compute, or eng's ConflictsUntil.
func (m *conflictMemo) read(ctx context.Context, eng *Agent) ([]Conflict, string, error) {
	if m != nil && m.compute != nil {
		return m.compute(ctx, eng)
	}
	return eng.ConflictsUntil(ctx)
}
