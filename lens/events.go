package lens

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agent-ls/agent-ls/store"
)

// Event is one change of the store, named as the typed event stream names
// it (agent.memory.OP); it carries ids, never content.
type Event struct {
	Type       string `json:"type"`
	Seq        uint64 `json:"seq"`
	RecordID   string `json:"recordId,omitempty"`
	ProposalID string `json:"proposalId,omitempty"`
	Actor      string `json:"actor"`
	At         string `json:"at"`
}

// Events is where the live page learns of changes.
type Events interface {
	// Follow calls fn for every change after it starts, in order, until ctx
	// ends; it returns nil then, or the error that stopped it.
	Follow(ctx context.Context, fn func(Event)) error
}

// EventOf is the event of a ledger entry.
func EventOf(e store.LedgerEntry) Event {
	return Event{Type: "agent.memory." + string(e.Op), Seq: e.Seq, RecordID: e.RecordID, ProposalID: e.ProposalID,
		Actor: e.Actor.String(), At: e.At}
}

// LedgerReader reads the ledger entries at or after since ("" = all).
type LedgerReader func(ctx context.Context, since string) ([]store.LedgerEntry, error)

// WatchFile follows a store file: it watches the file's directory
// (fsnotify) and, after each change to the file, reads the ledger entries
// past the last one seen, so a write that appended nothing (a transaction
// that changed no record) is no event.
func WatchFile(path string, read LedgerReader) Events {
	return &fileWatch{path: filepath.Clean(path), read: read}
}

type fileWatch struct {
	path string
	read LedgerReader
	// started, when set, is called once the watch is in place (tests).
	started func()
}

// settle is how long the watcher waits after a file event for more events
// of the same write before it reads the ledger.
const settle = 30 * time.Millisecond

func (w *fileWatch) Follow(ctx context.Context, fn func(Event)) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch store: %w", err)
	}
	defer fw.Close()
	if err := fw.Add(filepath.Dir(w.path)); err != nil {
		return fmt.Errorf("watch store: %w", err)
	}
	// The head: where the events start.
	var lastSeq uint64
	var lastAt string
	catchUp := func(emit bool) {
		entries, err := w.read(ctx, lastAt)
		if err != nil {
			return // not readable now (locked, not created yet): the next event retries
		}
		for _, e := range entries {
			if e.Seq <= lastSeq {
				continue
			}
			lastSeq, lastAt = e.Seq, e.At
			if emit {
				fn(EventOf(e))
			}
		}
	}
	catchUp(false)
	if w.started != nil {
		w.started()
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			if filepath.Clean(ev.Name) == w.path {
				timer.Reset(settle)
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			return fmt.Errorf("watch store: %w", err)
		case <-timer.C:
			catchUp(true)
		}
	}
}
