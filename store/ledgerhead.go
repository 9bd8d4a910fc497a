package store

import "fmt"

// CheckLedgerHead compares a verified chain of n entries whose last hash is
// last with the head a backend recorded at its last append (seq and hash
// of the last entry), which catches what the chain alone cannot: entries
// cut from its end, appended outside the store, or the last one replaced.
// A head of seq 0 and an empty chain agree. The error is a *LedgerError.
func CheckLedgerHead(n uint64, last string, seq uint64, hash string) error {
	switch {
	case n < seq:
		return &LedgerError{Seq: n + 1, Reason: fmt.Sprintf("the ledger ends at entry %d but its head records entry %d (entries removed from the end)", n, seq)}
	case n > seq:
		return &LedgerError{Seq: seq + 1, Reason: fmt.Sprintf("the ledger has %d entries but its head records entry %d (entries added outside the store)", n, seq)}
	case n > 0 && last != hash:
		return &LedgerError{Seq: n, Reason: "the last entry's hash does not match the ledger head (entry replaced)"}
	}
	return nil
}
