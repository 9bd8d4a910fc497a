package lsp

import (
	"sync"
	"time"
)

// idleWatch calls fn once the server has had nothing to do — no message
// being handled, no background job — for after, and not again until new
// work came and went. The language server hands it Options.Idle (cmd's
// release of freed heap to the system, so an editor's idle server shows
// its live memory, not the high water of its last burst). A nil idleWatch
// does nothing.
type idleWatch struct {
	after     time.Duration
	fn        func()
	afterFunc func(time.Duration, func()) interface{ Stop() bool }

	mu    sync.Mutex
	busy  int
	gen   uint64 // counts begin calls: a timer armed before one is stale
	timer interface{ Stop() bool }
}

// newIdleWatch is the watch calling fn after idle spells of after; nil when
// fn is nil or after is not positive.
func newIdleWatch(after time.Duration, fn func()) *idleWatch {
	if fn == nil || after <= 0 {
		return nil
	}
	return &idleWatch{after: after, fn: fn, afterFunc: func(d time.Duration, f func()) interface{ Stop() bool } {
		return time.AfterFunc(d, f)
	}}
}

// begin marks work started.
func (w *idleWatch) begin() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy++
	w.gen++
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}

// end marks work begun by begin done; the last to end arms the timer.
func (w *idleWatch) end() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy--; w.busy > 0 {
		return
	}
	gen := w.gen
	w.timer = w.afterFunc(w.after, func() {
		w.mu.Lock()
		fire := w.busy == 0 && w.gen == gen
		if fire {
			w.timer = nil
		}
		w.mu.Unlock()
		if fire {
			w.fn()
		}
	})
}
