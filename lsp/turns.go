package lsp

import "context"

// turns lets one holder at a time through: the server's store reads that
// decode an agent's records (a lint pass, a composition) take turns, so
// ten files opened together do not each hold a full decode of their
// agent's records at once (issue 35: at start-up those decodes were most
// of the server's peak memory). Make it with newTurns.
type turns chan struct{}

func newTurns() turns { return make(turns, 1) }

// take waits for the turn; an ended ctx gives its error and no turn.
func (t turns) take(ctx context.Context) error {
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// done ends the turn taken.
func (t turns) done() { <-t }
