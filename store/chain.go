package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// ChainError refuses an operation because the ledger's hash chain does not
// verify at entry Seq: no write is appended onto a broken chain and no
// replay trusts one. It wraps ErrCorrupt and the finding (a *LedgerError
// when there is one).
type ChainError struct {
	Seq uint64
	Err error
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("ledger does not verify at entry %d: run agent-ls memory ledger --verify", e.Seq)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true and exposes the finding.
func (e *ChainError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// AsChainError turns a verification failure (a *LedgerError) into the
// *ChainError that refuses an operation; other errors are returned as
// they are.
func AsChainError(err error) error {
	var le *LedgerError
	if errors.As(err, &le) {
		return &ChainError{Seq: le.Seq, Err: err}
	}
	return err
}

// CheckSealedJSON checks one stored ledger entry, data being the JSON a
// backend stored for the entry at position seq (json.Marshal of the sealed
// entry, see SealEntryJSON), whose predecessor's hash is prev. It returns
// the entry's hash. The bytes are checked as stored, without decoding them:
// they must start with the seq, end with prevHash and hash, and hash to
// that hash. Bytes in any other layout are decoded and checked with
// HashEntry. The error is a *LedgerError.
func CheckSealedJSON(data []byte, seq uint64, prev string) (string, error) {
	if h, ok := checkSealedFast(data, seq, prev); ok {
		return h, nil
	}
	var e LedgerEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return "", &LedgerError{Seq: seq, Reason: fmt.Sprintf("does not decode: %v", err)}
	}
	switch {
	case e.Seq != seq:
		return "", &LedgerError{Seq: seq, Reason: fmt.Sprintf("found seq %d at position %d (entries removed or reordered)", e.Seq, seq)}
	case e.Hash != HashEntry(e):
		return "", &LedgerError{Seq: seq, Reason: "hash does not match its content (entry edited)"}
	case e.PrevHash != prev:
		return "", &LedgerError{Seq: seq, Reason: "prevHash does not match the previous entry (history edited)"}
	}
	return e.Hash, nil
}

func checkSealedFast(data []byte, seq uint64, prev string) (string, bool) {
	const hashLen = 64
	head := `{"seq":` + strconv.FormatUint(seq, 10) + `,`
	tail := `"prevHash":"` + prev + `","hash":"`
	if len(data) < len(head)+len(tail)+hashLen+2 || !bytes.HasPrefix(data, []byte(head)) || !bytes.HasSuffix(data, []byte(`"}`)) {
		return "", false
	}
	end := len(data) - 2
	hash := data[end-hashLen : end]
	if !bytes.HasSuffix(data[:end-hashLen], []byte(tail)) {
		return "", false
	}
	h := sha256.New()
	h.Write(data[:end-hashLen])
	h.Write([]byte(`"}`))
	var sum [sha256.Size]byte
	got := hex.EncodeToString(h.Sum(sum[:0]))
	if got != string(hash) {
		return "", false
	}
	return got, true
}

// VerifyUpTo checks the chain of entries (in stored order) through the last
// entry with At <= at — the part a replay at time at rests on — as
// VerifyChain does. at "" checks them all.
func VerifyUpTo(entries []LedgerEntry, at string) error {
	n := len(entries)
	if at != "" {
		n = 0
		for i, e := range entries {
			if e.At <= at {
				n = i + 1
			}
		}
	}
	return VerifyChain(entries[:n])
}

// ChainVerifier is implemented by stores that check their hash chain
// without replaying it (store/bolt checks the stored bytes).
type ChainVerifier interface {
	// VerifyChainAt checks the chain through the last entry at or before
	// at ("" = the whole chain and its head); the error is a *ChainError.
	VerifyChainAt(ctx context.Context, at string) error
}

// CheckChain verifies s's chain through time at ("" = all): with s's own
// ChainVerifier when it has one, else by listing the ledger. A broken
// chain is a *ChainError.
func CheckChain(ctx context.Context, s Reader, at string) error {
	if cv, ok := s.(ChainVerifier); ok {
		return cv.VerifyChainAt(ctx, at)
	}
	entries, err := s.Ledger(ctx, LedgerFilter{})
	if err != nil {
		return err
	}
	return AsChainError(VerifyUpTo(entries, at))
}

// EntryFromJSON decodes a stored ledger entry and checks its own hash from
// the bytes (sha256 of the stored JSON with the hash emptied, the layout
// SealEntryJSON writes), which costs less than encoding the entry again;
// bytes in another layout are checked with HashEntry. ok reports whether
// the entry matches its hash; links to other entries are not checked.
func EntryFromJSON(data []byte) (e LedgerEntry, ok bool, err error) {
	ok, err = DecodeEntryJSON(data, &e, unmarshalEntry)
	return e, ok, err
}

func unmarshalEntry(data []byte, e *LedgerEntry) error { return json.Unmarshal(data, e) }

// DecodeEntryJSON is EntryFromJSON decoding into *e with decode in place
// of json.Unmarshal: a backend's faster decoder, which must decode every
// input as json.Unmarshal does (or fail where it fails).
func DecodeEntryJSON(data []byte, e *LedgerEntry, decode func([]byte, *LedgerEntry) error) (ok bool, err error) {
	*e = LedgerEntry{}
	if err := decode(data, e); err != nil {
		return false, err
	}
	const hashLen = 64
	end := len(data) - 2
	if end-hashLen > 0 && bytes.HasSuffix(data, []byte(`"}`)) && bytes.HasSuffix(data[:end-hashLen], []byte(`"hash":"`)) &&
		string(data[end-hashLen:end]) == e.Hash {
		h := sha256.New()
		h.Write(data[:end-hashLen])
		h.Write([]byte(`"}`))
		var sum [sha256.Size]byte
		var hexSum [2 * sha256.Size]byte
		hex.Encode(hexSum[:], h.Sum(sum[:0]))
		if string(hexSum[:]) == e.Hash {
			return true, nil
		}
	}
	return e.Hash == HashEntry(*e), nil
}
