package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// VerifyFailedError refuses a write because the store's last verification
// (Verify) found stored content its ledger does not vouch for: a backend
// persists the finding (VerifyMark) and every write checks it, so no write
// lands on such a store, whichever process or handle writes, until it is
// fixed or restored and a verification passes again. It wraps ErrCorrupt.
type VerifyFailedError struct {
	Finding string
}

func (e *VerifyFailedError) Error() string {
	return fmt.Sprintf("the last ledger verification failed (%s): no write lands until the store is fixed or restored and agent-ls memory ledger --verify passes", e.Finding)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *VerifyFailedError) Unwrap() error { return ErrCorrupt }

// maxMark bounds the finding a backend persists.
const maxMark = 512

// VerifyMark is the mark a Verify that returned err leaves: "" (cleared)
// when it passed, the finding when it found the store corrupt (ErrCorrupt:
// a broken chain, a *StateError), and set false when it failed for another
// reason (a cancelled context, a lost connection), which leaves the mark
// as it was.
func VerifyMark(err error) (mark string, set bool) {
	if err == nil {
		return "", true
	}
	if !errors.Is(err, ErrCorrupt) {
		return "", false
	}
	var se *StateError
	var le *LedgerError
	switch {
	case errors.As(err, &se):
		mark = se.Error()
	case errors.As(err, &le):
		mark = le.Error()
	default:
		mark = err.Error()
	}
	if len(mark) > maxMark {
		mark = mark[:maxMark] + "…"
	}
	return mark, true
}

// CheckVerifyMark is the error a write gets on a store whose persisted
// mark is mark: nil when it is empty.
func CheckVerifyMark(mark string) error {
	if mark == "" {
		return nil
	}
	return &VerifyFailedError{Finding: mark}
}

// VerifyRecorder is implemented by stores that keep a verification's
// outcome (VerifyMark) for their writes to check. A Store's own Verify
// records it; a Verify run on a View's Reader (one snapshot with other
// reads) cannot, and the caller hands the outcome to RecordVerify after.
type VerifyRecorder interface {
	// RecordVerify keeps the outcome of a verification that returned
	// err; one that failed for another reason than ErrCorrupt changes
	// nothing.
	RecordVerify(ctx context.Context, err error) error
}

// RecordVerify hands err, a verification's outcome, to s when it keeps
// them (VerifyRecorder); otherwise it does nothing.
func RecordVerify(ctx context.Context, s Store, err error) error {
	if r, ok := s.(VerifyRecorder); ok {
		return r.RecordVerify(ctx, err)
	}
	return nil
}

// ProposalRow is a proposal as a backend stores it: the key it is stored
// under, the fields its queries select on outside the body (columns; a
// backend that keeps none passes the body's own), and the decoded body.
type ProposalRow struct {
	Key       string
	RecordID  string
	Kind      string
	State     string
	ExpiresAt string
	Body      Proposal
}

// CompareProposalRows compares each stored proposal row with the proposal
// the ledger's replay (want) has under its key: the body is CompareState's;
// here the key and the selected-on fields, which decide what the pending,
// per-record and expiry queries find. A row the ledger never made is
// CompareState's difference, not repeated here.
func CompareProposalRows(want State, rows []ProposalRow) []Difference {
	var out []Difference
	for _, r := range rows {
		if r.Body.ID != r.Key {
			out = append(out, Difference{"proposal", r.Key, "the proposal stored under it is " + r.Body.ID})
		}
		w, ok := want.Proposals[r.Key]
		if !ok {
			continue
		}
		var f []string
		if r.RecordID != w.RecordID {
			f = append(f, "record")
		}
		if r.Kind != string(w.Kind) {
			f = append(f, "kind")
		}
		if r.State != string(w.State) {
			f = append(f, "state")
		}
		if r.ExpiresAt != w.ExpiresAt {
			f = append(f, "expiry")
		}
		if len(f) > 0 {
			out = append(out, Difference{"proposal", r.Key, "its stored " + strings.Join(f, ", ") + " column(s) differ(s) from the ledger's"})
		}
	}
	return out
}
