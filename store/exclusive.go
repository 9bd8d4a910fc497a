package store

import "context"

// Exclusive is implemented by a store that several machines share (the
// PostgreSQL store): a named, store-wide lock that at most one session holds
// at a time, such as the scheduled gardener's (agent-ls garden --every). A
// store one process opens at a time (the bbolt file, whose file lock already
// serialises its users) does not implement it.
type Exclusive interface {
	// TryLock takes the lock name without waiting. When another session
	// holds it, lock is nil and holder says who, when the backend can tell
	// ("" when it cannot).
	TryLock(ctx context.Context, name string) (lock Lock, holder string, err error)
}

// Lock is a held Exclusive lock.
type Lock interface {
	// Held reports whether the lock is still held: false once the session
	// that took it is gone (the server released it).
	Held(ctx context.Context) bool
	// Release releases the lock; it is safe to call more than once.
	Release()
}
