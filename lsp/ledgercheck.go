package lsp

import (
	"context"
	"errors"
	"sync"

	"github.com/agent-ls/agent-ls/store"
)

// A store whose ledger does not verify is reported as StoreUnverified (its
// records are still read and shown, and compose refuses any it cannot
// vouch for) and makes its workspace read-only: nothing is appended onto a
// broken chain, and the store would refuse it anyway.

// ledgerVerdicts remembers, per store file as it stands (storeStamp),
// whether its ledger's chain verifies, so the chain is read once per
// change of the file rather than on every request.
type ledgerVerdicts struct {
	mu       sync.Mutex
	last     map[string]ledgerVerdict // store path -> verdict
	inflight map[string]*chainCheck   // store path -> the check running
}

// chainCheck is one running check of a store file's chain: the documents
// opened together wait for one walk of the ledger rather than each
// walking it (ten walks of a large ledger at start).
type chainCheck struct {
	stamp   storeStamp
	done    chan struct{}
	problem string
	ok      bool // a verdict (not a cancelled or failed read)
}

type ledgerVerdict struct {
	stamp   storeStamp
	problem string
}

// problem is "" when the chain of st (the store at path) verifies, else
// why not (store.ChainError's text). Other errors (a cancelled request, a
// lock) are no verdict: they return "" and are not remembered.
func (v *ledgerVerdicts) problem(ctx context.Context, path string, st store.Reader) string {
	stamp, _, ok := stampOf(path)
	if ok {
		v.mu.Lock()
		got, hit := v.last[path]
		v.mu.Unlock()
		if hit && got.stamp == stamp {
			return got.problem
		}
		if p, ok := v.join(ctx, path, stamp); ok {
			return p
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
		problem, verdict := v.check(ctx, path, st, stamp, ok)
		c.problem, c.ok = problem, verdict
		return problem
	}
	problem, _ := v.check(ctx, path, st, stamp, ok)
	return problem
}

// join waits for a check of the same file state that is already running
// and returns its verdict; ok is false when there is none (or it gave no
// verdict, or ctx ended first): the caller checks for itself.
func (v *ledgerVerdicts) join(ctx context.Context, path string, stamp storeStamp) (string, bool) {
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
// (they give ""). A verdict on a file that kept its stamp is remembered.
func (v *ledgerVerdicts) check(ctx context.Context, path string, st store.Reader, stamp storeStamp, ok bool) (string, bool) {
	err := store.CheckChain(ctx, st, "")
	var ce *store.ChainError
	problem := ""
	switch {
	case errors.As(err, &ce):
		problem = ce.Error()
	case err != nil:
		return "", false
	}
	if after, _, ok2 := stampOf(path); ok && ok2 && after == stamp {
		v.mu.Lock()
		if v.last == nil || len(v.last) >= maxCounts {
			v.last = map[string]ledgerVerdict{}
		}
		v.last[path] = ledgerVerdict{stamp: stamp, problem: problem}
		v.mu.Unlock()
		return problem, true
	}
	return problem, false
}

// ledgerReadOnly is the readOnlyCheck of a store whose ledger does not
// verify.
func (t *storeTracker) ledgerReadOnly(ctx context.Context, ws *workspaceInfo) string {
	if ws == nil || ws.StorePath == "" || !fileExists(ws.StorePath) {
		return ""
	}
	open := t.s.opts.OpenStoreReadOnly
	if open == nil {
		open = t.s.opts.OpenStore
	}
	if open == nil {
		return ""
	}
	st, err := open(ctx, ws.StorePath)
	if err != nil {
		return ""
	}
	defer st.Close()
	if p := t.ledger.problem(ctx, ws.StorePath, st); p != "" {
		return "the memory store's " + p
	}
	return ""
}
