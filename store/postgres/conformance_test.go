package postgres_test

import (
	"context"
	"testing"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/postgres"
	"github.com/agent-ls/agent-ls/store/postgres/pgtest"
	"github.com/agent-ls/agent-ls/store/storetest"
)

// TestConformance runs the store protocol's conformance kit against a
// fresh schema of the test server per store.
func TestConformance(t *testing.T) {
	t.Parallel()
	pgtest.URL(t)
	storetest.Run(t, func(t *testing.T, opts store.Options) store.Store {
		s, err := postgres.Open(context.Background(), pgtest.Fresh(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
