package store

import (
	"fmt"
	"strconv"
	"strings"
)

// Head names a ledger entry by its sequence number and hash: the head of a
// chain, printed SEQ:HASH. A team that pins a head (in CI, say) can later
// check that the chain still extends it (CheckPin).
type Head struct {
	Seq  uint64
	Hash string
}

// String prints SEQ:HASH; the empty chain's head is 0: (no hash).
func (h Head) String() string { return strconv.FormatUint(h.Seq, 10) + ":" + h.Hash }

// HeadOf is the head of entries (their last entry), Head{} when empty.
func HeadOf(entries []LedgerEntry) Head {
	if len(entries) == 0 {
		return Head{}
	}
	e := entries[len(entries)-1]
	return Head{Seq: e.Seq, Hash: e.Hash}
}

// ParseHead parses SEQ:HASH (a hash of 64 hex digits; 0: for the empty
// chain).
func ParseHead(s string) (Head, error) {
	seqS, hash, ok := strings.Cut(strings.TrimSpace(s), ":")
	seq, err := strconv.ParseUint(seqS, 10, 64)
	if !ok || err != nil {
		return Head{}, fmt.Errorf("head %q: want SEQ:HASH, as `agent-ls memory ledger --head` prints it", s)
	}
	if seq == 0 && hash == "" {
		return Head{}, nil
	}
	if len(hash) != 64 || strings.Trim(strings.ToLower(hash), "0123456789abcdef") != "" {
		return Head{}, fmt.Errorf("head %q: the hash must be 64 hex digits", s)
	}
	return Head{Seq: seq, Hash: strings.ToLower(hash)}, nil
}

// CheckPin reports whether the chain entries (already verified link by
// link) still extends pin: entry pin.Seq must be there with pin.Hash. A
// chain cut before the pin or rewritten at or before it is a *LedgerError
// (wrapping ErrCorrupt).
func CheckPin(entries []LedgerEntry, pin Head) error {
	if pin.Seq == 0 {
		return nil
	}
	if uint64(len(entries)) < pin.Seq {
		return &LedgerError{Seq: uint64(len(entries)) + 1, Reason: fmt.Sprintf("the chain ends at entry %d, before the pinned head %s (entries removed)", len(entries), pin)}
	}
	if e := entries[pin.Seq-1]; e.Seq != pin.Seq || e.Hash != pin.Hash {
		return &LedgerError{Seq: pin.Seq, Reason: fmt.Sprintf("the chain no longer extends the pinned head %s: entry %d has hash %s (history rewritten)", pin, pin.Seq, e.Hash)}
	}
	return nil
}
