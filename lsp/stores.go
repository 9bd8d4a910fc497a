package lsp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/store"
)

// storeTracker opens the store for one operation at a time (never holding
// it open between operations), remembers each store's state, sends
// agent-ls/status when a state or a pending-review count changes, and
// warns once when a store becomes unusable.
type storeTracker struct {
	s *server

	mu      sync.Mutex
	states  map[string]StoreState           // store path -> last state
	pending map[protocol.DocumentURI]int    // open agent -> pending reviews sent
	paths   map[protocol.DocumentURI]string // open agent -> its store path
	counts  map[countKey]int                // pending reviews read from an unchanged store file
	ledger  engine.ChainVerdicts            // whether each store file's ledger verifies
}

// countKey is a pending-review count's store file (with its stamp), agent
// and scope.
type countKey struct {
	path  string
	stamp engine.StoreStamp
	agent string
	scope string
}

// maxCounts bounds storeTracker.counts (cleared when full).
const maxCounts = 64

func newStoreTracker(s *server) *storeTracker {
	return &storeTracker{s: s, states: map[string]StoreState{}, pending: map[protocol.DocumentURI]int{}, paths: map[protocol.DocumentURI]string{}, counts: map[countKey]int{}}
}

// stableKey is the countKey of ws's store file for agent when the file is
// usable for a cached answer: it exists and was not written within
// engine.RacyWindow.
func (t *storeTracker) stableKey(ws *workspaceInfo, agent string) (countKey, bool) {
	stamp, ok := engine.SettledStamp(ws.StorePath, t.s.opts.Now())
	if !ok {
		return countKey{}, false
	}
	return countKey{path: ws.StorePath, stamp: stamp, agent: agent, scope: scopeKey(ws.Config.Scope)}, true
}

// cached returns the pending-review count read from ws's store file as it
// is now, when the last use found the store connected and the file has not
// changed since: the caller can skip opening it.
func (t *storeTracker) cached(ws *workspaceInfo, agent string) (int, bool) {
	key, ok := t.stableKey(ws, agent)
	if !ok {
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	n, hit := t.counts[key]
	return n, hit && t.states[ws.StorePath] == StoreConnected
}

// classify maps an open or operation error to a store state.
func classify(err error) StoreState {
	switch {
	case err == nil:
		return StoreConnected
	case errors.Is(err, store.ErrLocked):
		return StoreLocked
	case errors.Is(err, store.ErrCorrupt):
		return StoreCorrupt
	case errors.Is(err, store.ErrUnavailable):
		return StoreUnreachable
	}
	return StoreMissing
}

// with opens ws's store, counts the pending reviews of agent (all of the
// scope when agent is ""), calls fn with the open store, and closes it. When
// the store cannot be used fn gets nil. uri, when set, is the open agent the
// status is about.
func (t *storeTracker) with(ctx context.Context, ws *workspaceInfo, uri protocol.DocumentURI, agent string, fn func(st store.Reader)) {
	state, msg, pending := t.use(ctx, ws, agent, fn)
	if ctx.Err() != nil {
		return
	}
	t.report(ws, uri, state, msg, pending)
}

func (t *storeTracker) use(ctx context.Context, ws *workspaceInfo, agent string, fn func(st store.Reader)) (state StoreState, msg string, pending int) {
	call := func(st store.Reader) {
		if fn != nil {
			fn(st)
		}
	}
	open := t.s.opts.OpenStoreReadOnly
	if open == nil {
		open = t.s.opts.OpenStore
	}
	if open == nil {
		call(nil)
		return StoreMissing, "no store configured", 0
	}
	if !storeExists(ws.StorePath) {
		call(nil)
		return StoreMissing, fmt.Sprintf("no memory store at %s yet", engine.Redact(ws.StorePath)), 0
	}
	key, stable := t.stableKey(ws, agent)
	st, err := open(ctx, ws.StorePath)
	if err != nil {
		call(nil)
		return classify(err), err.Error(), 0
	}
	defer func() {
		if cerr := st.Close(); cerr != nil {
			t.s.log.Debug("close store", "path", engine.Redact(ws.StorePath), "err", cerr)
		}
	}()
	// One snapshot: the pending count, fn's reads and the ledger check
	// agree even while another process writes.
	var props []store.Proposal
	var problem string
	called := false
	err = st.View(ctx, func(r store.Reader) error {
		var err error
		props, err = r.Proposals(ctx, store.ProposalFilter{State: store.ProposalPending, Scope: ws.Config.Scope, Agent: agent})
		if err != nil {
			return err
		}
		called = true
		call(r)
		problem = t.ledger.Problem(ctx, ws.StorePath, r)
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return StoreConnected, "", 0
		}
		if !called {
			call(nil)
		}
		return classify(err), err.Error(), 0
	}
	if problem != "" {
		return StoreUnverified, problem, len(props)
	}
	if after, ok := t.stableKey(ws, agent); stable && ok && after == key {
		t.mu.Lock()
		if len(t.counts) >= maxCounts {
			clear(t.counts)
		}
		t.counts[key] = len(props)
		t.mu.Unlock()
	}
	return StoreConnected, "", len(props)
}

// report sends agent-ls/status when something changed, and the one warning
// when the store turns unusable.
func (t *storeTracker) report(ws *workspaceInfo, uri protocol.DocumentURI, state StoreState, msg string, pending int) {
	t.mu.Lock()
	prev, seen := t.states[ws.StorePath]
	t.states[ws.StorePath] = state
	changed := !seen || prev != state
	if uri != "" {
		old, had := t.pending[uri]
		if !had || old != pending || t.paths[uri] != ws.StorePath {
			changed = true
		}
		t.pending[uri] = pending
		t.paths[uri] = ws.StorePath
	}
	t.mu.Unlock()
	if !changed {
		return
	}
	t.s.notify(methodStatus, &Status{URI: uri, Store: state, StorePath: engine.Redact(ws.StorePath), PendingReviews: pending, Message: msg})
	if prev == state {
		return
	}
	switch state {
	case StoreLocked, StoreCorrupt, StoreUnreachable:
		t.s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf(
			"agent-ls: the memory store is %s (%s); serving schema diagnostics only, retrying on the next change", state, msg))
	case StoreUnverified:
		t.s.showMessage(protocol.MessageTypeError, fmt.Sprintf(
			"agent-ls: the memory store's %s; the language server is read-only for this store (no approvals, promotions or other changes) until it is fixed", msg))
	case StoreMissing:
		// Only a store that was there can be gone: a workspace without a
		// store yet is normal.
		if seen {
			t.s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf(
				"agent-ls: the memory store at %s is gone (deleted or moved away); serving schema diagnostics only until a store is back", engine.Redact(ws.StorePath)))
		}
	case StoreConnected:
		if seen {
			t.s.log.Info("memory store connected again", "path", engine.Redact(ws.StorePath))
		}
	}
}

// probe checks a workspace's store and reports its status.
func (t *storeTracker) probe(ctx context.Context, ws *workspaceInfo, uri protocol.DocumentURI) {
	t.with(ctx, ws, uri, "", nil)
}

// forget drops what was reported for a closed document.
func (t *storeTracker) forget(uri protocol.DocumentURI) {
	t.mu.Lock()
	delete(t.pending, uri)
	delete(t.paths, uri)
	t.mu.Unlock()
}
