package engine

import (
	"context"

	"github.com/agent-ls/agent-ls/store"
)

// GardenLock is the store-wide lock a scheduled gardener (agent-ls garden
// --every) holds while it runs, so that on a shared store one runner
// gardens at a time across machines.
const GardenLock = "garden"

// Lock is a held store-wide lock (store.Lock).
type Lock = store.Lock

// TryExclusive takes the store-wide lock name of st without waiting, when
// st is shared between machines (it implements store.Exclusive: the
// PostgreSQL store's session-level advisory lock). lock is nil when another
// session holds it, and holder then says who when the backend can tell. A
// store that does not implement it (the bbolt file, whose file lock
// serialises its users) always grants a lock that holds until released.
func TryExclusive(ctx context.Context, st store.Store, name string) (lock Lock, holder string, err error) {
	if x, ok := st.(store.Exclusive); ok {
		return x.TryLock(ctx, name)
	}
	return &localLock{}, "", nil
}

// localLock is TryExclusive's lock on a store without store-wide locks.
type localLock struct{ released bool }

func (l *localLock) Held(context.Context) bool { return !l.released }
func (l *localLock) Release()                  { l.released = true }
