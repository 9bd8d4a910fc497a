package engine

import (
	"context"
	"path/filepath"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/agent-ls/agent-ls/store"
)

// queueReaders is how many reads of one store a process runs at once.
const queueReaders = 64

// StoreQueue is the line that one process's operations on one store wait
// in. A surface that opens its store per request (the MCP server answers
// calls concurrently) would otherwise race its own calls for the store's
// file lock, and a call that lost for longer than the lock timeout was
// told that another process holds the store when none did. Through the
// queue, a write waits in this process — for as long as its ctx allows —
// until the reads and writes ahead of it are done, and only then opens
// the store, so the lock timeout and its error are left to what they
// mean: another process. Reads run together (up to 64 at once); a write
// runs alone. The store is still opened and closed per operation, so
// other processes can use it between them. Waiters are served in order.
// A queue of a location (QueueFor) also remembers its store file's chain
// verdict (ChainCheck).
type StoreQueue struct {
	sem *semaphore.Weighted
	// loc is the store file the queue is for: "" for NewStoreQueue's, or
	// a database URL, where ChainVerdicts remembers nothing (no stamp).
	loc   string
	chain ChainVerdicts
}

// NewStoreQueue returns an empty queue of no location.
func NewStoreQueue() *StoreQueue {
	return &StoreQueue{sem: semaphore.NewWeighted(queueReaders)}
}

// ChainCheck is the check of st's ledger chain that a read through q
// makes where it shows what the ledger says (AgentSpec.ChainCheck): a
// verdict that the store file, as st reads it, verifies is remembered for
// q's location while the file keeps its stamp (ChainVerdicts), so every
// surface of a process (the lens's pages, the MCP server's
// memory_learnings) walks a large ledger once per change of the file;
// anything else is the full check, whose error is the one to report.
func (q *StoreQueue) ChainCheck(st store.Reader) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if p, ok := q.chain.Check(ctx, q.loc, st); ok && p == "" {
			return nil
		}
		return store.CheckChain(ctx, st, "")
	}
}

var (
	queuesMu sync.Mutex
	queues   = map[string]*StoreQueue{}
)

// QueueFor returns this process's queue for the store at loc (a file path
// or a database URL, as StoreLocation resolves it): every caller naming
// the same location shares it.
func QueueFor(loc string) *StoreQueue {
	key := loc
	if !IsURL(loc) {
		if abs, err := filepath.Abs(loc); err == nil {
			key = abs
		}
	}
	queuesMu.Lock()
	defer queuesMu.Unlock()
	q, ok := queues[key]
	if !ok {
		q = NewStoreQueue()
		q.loc = key
		queues[key] = q
	}
	return q
}

// WithStore is WithStore run in its turn: a read waits for the writes
// ahead of it, a write for everything ahead of it. A ctx that ends while
// waiting returns its error and opens nothing.
func (q *StoreQueue) WithStore(ctx context.Context, open OpenFunc, write bool, fn func(store.Tx) error) error {
	n := int64(1)
	if write {
		n = queueReaders
	}
	if err := q.sem.Acquire(ctx, n); err != nil {
		return err
	}
	defer q.sem.Release(n)
	return WithStore(ctx, open, write, fn)
}
