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
	mu   sync.Mutex
	last map[string]ledgerVerdict // store path -> verdict
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
	}
	err := store.CheckChain(ctx, st, "")
	var ce *store.ChainError
	problem := ""
	switch {
	case errors.As(err, &ce):
		problem = ce.Error()
	case err != nil:
		return ""
	}
	if after, _, ok2 := stampOf(path); ok && ok2 && after == stamp {
		v.mu.Lock()
		if v.last == nil || len(v.last) >= maxCounts {
			v.last = map[string]ledgerVerdict{}
		}
		v.last[path] = ledgerVerdict{stamp: stamp, problem: problem}
		v.mu.Unlock()
	}
	return problem
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
