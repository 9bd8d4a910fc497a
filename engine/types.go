package engine

import (
	"github.com/agent-ls/agent-ls/compose"
	"github.com/agent-ls/agent-ls/evolve"
	"github.com/agent-ls/agent-ls/overlay"
	"github.com/agent-ls/agent-ls/trust"
)

// The typed results and requests of the engine's verbs. Each is declared
// beside the rule that produces it and named here, so surfaces depend on
// the engine alone.
type (
	// Outcome is the result of a gated operation (promote, demote,
	// invalidate, supersede, approve, reject).
	Outcome = evolve.Outcome
	// Status is an Outcome's status.
	Status = evolve.Status
	// SaveRequest is one memory to save.
	SaveRequest = evolve.SaveRequest
	// SaveResult is the answer of a save.
	SaveResult = evolve.SaveResult
	// SaveStatus is a SaveResult's status.
	SaveStatus = evolve.SaveStatus
	// BatchError is a save-batch error naming the request it stopped at.
	BatchError = evolve.BatchError
	// HealthReport is one agent's garden report.
	HealthReport = evolve.HealthReport
	// Learning is one learned record with its state, for `learnings`.
	Learning = evolve.Learning
	// RecordState is a saved record's state (candidate, pending, promoted).
	RecordState = evolve.State
	// Evaluator runs the eval gate.
	Evaluator = evolve.Evaluator
	// Conflict is a conflict between a record and another side.
	Conflict = evolve.Conflict

	// ComposeRequest asks for one agent's composition.
	ComposeRequest = compose.Request
	// ComposeResult is a composed agent.
	ComposeResult = compose.Result
	// AtError is Compose's error for a point in time that is not one; a
	// surface words it with the name of its own parameter (AtError.Err).
	AtError = compose.AtError

	// Policy holds the overlay's budgets and ceiling.
	Policy = overlay.Policy
	// Report says where each learned record went in a composition.
	Report = overlay.Report
	// Section is one section of a composed prompt, with attribution.
	Section = overlay.Section
	// Fragment is one attributed piece of a section.
	Fragment = overlay.Fragment
	// RecallBlock is the recall block of a composition.
	RecallBlock = overlay.RecallBlock
	// Totals are a report's sizes.
	Totals = overlay.Totals
	// Attribution maps learned lines to their records.
	Attribution = overlay.Attribution
	// Prompt is a rendered system prompt.
	Prompt = overlay.Prompt
	// PlacementStatus is where a record went (applied, spilled, shadowed).
	PlacementStatus = overlay.Status

	// View is what one actor sees of a store.
	View = trust.View
	// ActorSource says where a resolved actor came from.
	ActorSource = trust.ActorSource
)

// The verbs' status values.
const (
	StatusPromoted    = evolve.StatusPromoted
	StatusPending     = evolve.StatusPending
	StatusBlocked     = evolve.StatusBlocked
	StatusRefused     = evolve.StatusRefused
	StatusDemoted     = evolve.StatusDemoted
	StatusInvalidated = evolve.StatusInvalidated
	StatusApproved    = evolve.StatusApproved
	StatusRejected    = evolve.StatusRejected
	StatusDropped     = evolve.StatusDropped

	SaveSaved    = evolve.SaveSaved
	SaveConflict = evolve.SaveConflict
	SaveNotFound = evolve.SaveNotFound
	SaveRefused  = evolve.SaveRefused

	StatePromoted  = evolve.StatePromoted
	StateCandidate = evolve.StateCandidate
	StatePending   = evolve.StatePending

	FindingConflict       = evolve.FindingConflict
	FindingEvalRegression = evolve.FindingEvalRegression

	PlacementApplied  = overlay.StatusApplied
	PlacementSpilled  = overlay.StatusSpilled
	PlacementShadowed = overlay.StatusShadowed

	FromExplicit = trust.FromExplicit
	FromConfig   = trust.FromConfig
	FromUser     = trust.FromUser
)

// ErrRefused is a gate refusal: an operation the actor may never perform.
var ErrRefused = evolve.ErrRefused
