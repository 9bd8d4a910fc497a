package schema

import "errors"

// ErrLockedTarget is the error of a target naming a locked part of the
// anatomy (persona, tone, methodology, mission): they are authored
// identity, never learned (ADR-0008 Decision 4, the locked tier).
var ErrLockedTarget = errors.New("locked")

// LockedNames are the parts of an agent a memory may never target; they
// parse to ErrLockedTarget rather than "unknown primitive".
var LockedNames = []string{"persona", "tone", "methodology", "mission"}

// LockedReason is the tier table's reason for the locked tier, the one
// message every surface gives for a locked target.
const LockedReason = "the locked tier is authored, never learned: persona, tone, methodology, mission, " +
	"manual workflows (until their phase) and new judgment domains; save it untargeted to keep it in recall"

// lockedTargetError is ParseTarget's error for a locked name.
func lockedTargetError(s string) error {
	return &ValueError{Name: "target", Value: s, Why: ErrLockedTarget.Error() + ": " + LockedReason, Err: ErrLockedTarget}
}
