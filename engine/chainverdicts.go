package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agent-ls/agent-ls/store"
)

// maxVerdicts bounds the store files ChainVerdicts remembers (cleared when
// full).
const maxVerdicts = 64

// ChainVerdicts remembers, per store file as it stands (StoreStamp),
// whether its ledger's chain verifies, so a long-lived process (the
// language server, the lens) walks a large ledger once per change of the
// file rather than on every request. Checks of one file state running at
// once share one walk. A file written within RacyWindow is walked on
// every check until it ages: its stamp could survive a second write. The
// zero value is ready; a nil *ChainVerdicts remembers nothing. A store
// that is not a file (PostgreSQL) is checked every time.
type ChainVerdicts struct {
	mu       sync.Mutex
	last     map[string]chainVerdict // store path -> verdict
	inflight map[string]*chainCheck  // store path -> the check running
}

// chainCheck is one running check of a store file's chain.
type chainCheck struct {
	stamp   StoreStamp
	done    chan struct{}
	problem string
	ok      bool // a verdict (not a cancelled or failed read)
}

type chainVerdict struct {
	stamp   StoreStamp
	problem string
}

// Problem is Check's problem: "" when the chain of st verifies or when no
// verdict could be had.
func (v *ChainVerdicts) Problem(ctx context.Context, path string, st store.Reader) string {
	p, _ := v.Check(ctx, path, st)
	return p
}

// Check tells whether the chain of st, the store at path as a read holding
// it sees it, verifies: problem is "" when it does, else why not
// (store.ChainError's text). verdict is false for errors that are no
// verdict (a cancelled request, a lock), which give "" and are not
// remembered. A verdict is reused while the file keeps its stamp; one of
// a file written within RacyWindow is not remembered (SettledStamp).
func (v *ChainVerdicts) Check(ctx context.Context, path string, st store.Reader) (problem string, verdict bool) {
	stamp, settled := SettledStamp(path, time.Now())
	if v == nil || !settled {
		return v.check(ctx, path, st, stamp, false)
	}
	v.mu.Lock()
	got, hit := v.last[path]
	v.mu.Unlock()
	if hit && got.stamp == stamp {
		return got.problem, true
	}
	if p, ok := v.join(ctx, path, stamp); ok {
		return p, true
	}
	c := &chainCheck{stamp: stamp, done: make(chan struct{})}
	v.mu.Lock()
	if v.inflight == nil {
		v.inflight = map[string]*chainCheck{}
	}
	if _, running := v.inflight[path]; !running {
		v.inflight[path] = c
		defer func() {
			v.mu.Lock()
			if v.inflight[path] == c {
				delete(v.inflight, path)
			}
			v.mu.Unlock()
			close(c.done)
		}()
	}
	v.mu.Unlock()
	c.problem, c.ok = v.check(ctx, path, st, stamp, true)
	return c.problem, c.ok
}

// join waits for a check of the same file state that is already running
// and returns its verdict; ok is false when there is none (or it gave no
// verdict, or ctx ended first): the caller checks for itself.
func (v *ChainVerdicts) join(ctx context.Context, path string, stamp StoreStamp) (string, bool) {
	v.mu.Lock()
	c := v.inflight[path]
	v.mu.Unlock()
	if c == nil || c.stamp != stamp {
		return "", false
	}
	select {
	case <-c.done:
		return c.problem, c.ok
	case <-ctx.Done():
		return "", false
	}
}

// check walks st's chain; verdict is false for errors that are no verdict
// (they give ""). With remember, a verdict on a file that kept its stamp
// (stamped) is remembered; one on a file that changed meanwhile is none.
func (v *ChainVerdicts) check(ctx context.Context, path string, st store.Reader, stamp StoreStamp, remember bool) (string, bool) {
	err := store.CheckChain(ctx, st, "")
	var ce *store.ChainError
	problem := ""
	switch {
	case errors.As(err, &ce):
		problem = ce.Error()
	case err != nil:
		return "", false
	}
	if !remember {
		return problem, true
	}
	if after, _, ok := StampOf(path); !ok || after != stamp {
		return problem, false
	}
	v.mu.Lock()
	if v.last == nil || len(v.last) >= maxVerdicts {
		v.last = map[string]chainVerdict{}
	}
	v.last[path] = chainVerdict{stamp: stamp, problem: problem}
	v.mu.Unlock()
	return problem, true
}
