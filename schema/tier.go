package schema

// Tier is how hard it is for a memory to enter a slot (ADR-0008 Decision 4).
type Tier string

// The tiers, from least to most guarded.
const (
	TierAuto    Tier = "auto"    // promoted at save once reconciled
	TierEarned  Tier = "earned"  // recurrence across conversations or an eval pass
	TierGuarded Tier = "guarded" // a human approval
	TierLocked  Tier = "locked"  // never promotable
)

// TierOf returns the tier of a target. This table is the single source of
// truth: auto for background.* and awareness; earned for judgment.heuristics
// and example; guarded for judgment.constraints, judgment.escalationTriggers
// and recovery; locked for everything else (manual workflows included until
// their phase).
func TierOf(t MemoryTarget) Tier {
	switch t.Primitive {
	case PrimitiveBackground, PrimitiveAwareness:
		return TierAuto
	case PrimitiveExample:
		return TierEarned
	case PrimitiveJudgment:
		switch t.Slot {
		case SlotHeuristics:
			return TierEarned
		case SlotConstraints, SlotEscalationTriggers:
			return TierGuarded
		}
	case PrimitiveRecovery:
		return TierGuarded
	}
	return TierLocked
}
