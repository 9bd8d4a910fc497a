package trust

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/backend"
)

// OpenStore opens the store at location (a file path or a database URL)
// through store/backend.Open. A store opened for writing must read in full
// (RefuseDamaged); otherwise it is closed again and the error returned.
func OpenStore(ctx context.Context, location string, opts store.Options) (store.Store, error) {
	st, err := backend.Open(ctx, location, opts)
	if err != nil {
		return nil, err
	}
	if !opts.ReadOnly {
		if err := RefuseDamaged(ctx, location, st); err != nil {
			_ = st.Close()
			return nil, err
		}
	}
	return st, nil
}

// RefuseDamaged is the damage policy: it reads the whole store (records,
// the ledger, proposals and promotions) before a write. A file with damaged
// pages can still open and take a write whose pages happen to be intact; no
// surface writes to a store it cannot read in full, so any unreadable part
// is an error wrapping store.ErrCorrupt and the store is left as it was. A
// store file that does not exist yet passes. A database store (a URL)
// passes without the read: the damage it guards against is a file's torn or
// overwritten pages, which a database server guards itself (its rows
// decode or the query fails), and reading a team's whole store before each
// command would make every write's cost grow with the store; `agent-ls
// memory ledger --verify` checks a database store's chain and state.
func RefuseDamaged(ctx context.Context, location string, s store.Store) error {
	if backend.IsURL(location) {
		return nil
	}
	if _, err := os.Stat(location); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := s.Search(ctx, store.Query{IncludeInvalidated: true, Limit: store.Limit(store.Unlimited)}); err != nil {
		return fmt.Errorf("read records before writing: %w", err)
	}
	if _, err := s.Ledger(ctx, store.LedgerFilter{}); err != nil {
		return fmt.Errorf("read ledger before writing: %w", err)
	}
	if _, err := s.Proposals(ctx, store.ProposalFilter{}); err != nil {
		return fmt.Errorf("read proposals before writing: %w", err)
	}
	if _, err := s.Promoted(ctx, nil, ""); err != nil {
		return fmt.Errorf("read promotions before writing: %w", err)
	}
	return nil
}
