package memstore_test

import (
	"testing"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/memstore"
	"github.com/agent-ls/agent-ls/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, opts store.Options) store.Store {
		return memstore.New(opts)
	})
}
