package store

import "context"

// DamageChecker is implemented by stores that can tell, without reading
// and decoding every record and ledger entry, whether such a full read
// would fail. engine.RefuseDamaged uses it before a write; a store
// without it is read in full.
type DamageChecker interface {
	// CheckDamage returns nil when every read of the whole store would
	// succeed, else the error the first failing read would give (wrapping
	// ErrCorrupt for damaged data).
	CheckDamage(ctx context.Context) error
}
