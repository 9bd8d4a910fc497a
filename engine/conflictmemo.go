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
// once per load. A nil *conflictMemo remembers nothing; a store that is
// not a file is asked every time.
type conflictMemo struct {
	mu sync.Mutex
	m  map[conflictOwner]conflictEntry
}

type conflictOwner struct{ path, agent string }

type conflictEntry struct {
	stamp StoreStamp
	file  [sha256.Size]byte
	until string // "" holds until the files change
	cs    []Conflict
}

// conflicts returns agent's conflicts as eng, over the store file at path
// and the agent file of bytes sum, reads them at now: remembered ones when
// both files are as they were and now is before their until, else read
// and remembered when the store file was settled before and unchanged
// after the read. The conflicts are shared: never modify them.
func (m *conflictMemo) conflicts(ctx context.Context, eng *Agent, path, agent string, sum [sha256.Size]byte, now time.Time) ([]Conflict, error) {
	stamp, settled := SettledStamp(path, time.Now())
	if m == nil || !settled {
		cs, _, err := eng.ConflictsUntil(ctx)
		return cs, err
	}
	owner := conflictOwner{path: path, agent: agent}
	nowS := schema.FormatTime(now)
	m.mu.Lock()
	e, hit := m.m[owner]
	m.mu.Unlock()
	if hit && e.stamp == stamp && e.file == sum && (e.until == "" || nowS < e.until) {
		return e.cs, nil
	}
	cs, until, err := eng.ConflictsUntil(ctx)
	if err != nil {
		return nil, err
	}
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
