package bolt

import (
	"path/filepath"
	"testing"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/storetest"
)

// TestConformance runs the store protocol's conformance kit against real
// database files.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, opts store.Options) store.Store {
		s, err := Open(filepath.Join(t.TempDir(), ".agent-memory", "memory.db"), opts)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
