package lsp

import (
	"context"
)

// A store whose ledger does not verify is reported as StoreUnverified (its
// records are still read and shown, and compose refuses any it cannot
// vouch for) and makes its workspace read-only: nothing is appended onto a
// broken chain, and the store would refuse it anyway. storeTracker.ledger
// (engine.ChainVerdicts) walks a store file's chain once per change of it.

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
	if p := t.ledger.Problem(ctx, ws.StorePath, st); p != "" {
		return "the memory store's " + p
	}
	return ""
}
