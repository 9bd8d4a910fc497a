package lsp

import "context"

// turns lets one holder at a time through: the server's store reads that
// decode an agent's records (a lint pass, a composition) take turns, so
// ten files opened together do not each hold a full decode of their
// agent's records at once (issue 35: at start-up those decodes were most
// of the server's peak memory). Make it with newTurns.
type turns chan struct{}

func newTurns() turns { return make(turns, 1) }

// take waits for the turn; an ended ctx gives its error and no turn while
// the turn is held (a free turn is taken).
func (t turns) take(ctx context.Context) error {
	select {
	case t <- struct{}{}:
		return nil
	default:
	}
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// done ends the turn taken.
func (t turns) done() { <-t }

// bigAgentRecords is the size, in records, from which an agent is big: a
// lint pass and a composition of big agents take one turn between them
// (server.turn).
const bigAgentRecords = 16000

// turn takes t, one of the server's turns, for work on o's records and,
// unless the budget knows o's agent to hold fewer than bigAgentRecords
// (recordBudget.size: an agent not read yet may be big, whatever the
// other agents of its store hold), the turn a lint pass and a composition
// of big agents share: a lint pass of one agent of 100k candidates and a
// composition of another, each holding its agent's records and analyses,
// were the server's peak memory at 1M records (issue 35). done ends both.
func (s *server) turn(ctx context.Context, t turns, o recordOwner) (done func(), err error) {
	if err := t.take(ctx); err != nil {
		return nil, err
	}
	if n, known := s.budget.size(o); known && n < bigAgentRecords {
		return t.done, nil
	}
	if err := s.bigTurns.take(ctx); err != nil {
		t.done()
		return nil, err
	}
	return func() {
		s.bigTurns.done()
		t.done()
	}, nil
}
