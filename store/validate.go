package store

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
)

// ValidateWrite checks one write request with schema.CheckMemory, the one
// record validator (the same that Import runs): kind, content, scope and
// tags (the identifier rule), target, payload shape, and the sizes of
// schema.MaxLimits as a defence behind the surfaces (which apply the
// workspace's limits). The error wraps ErrInvalid and names the field.
//
// A payload is not required here even for targets that need one
// (schema.MemoryTarget.NeedsPayload): such a record is stored but cannot be
// promoted, which is evolve's gate. A payload that is there must have the
// target's shape.
func ValidateWrite(req WriteRequest) error {
	return invalid(schema.CheckMemory(&schema.MemoryRecord{Kind: req.Kind, Content: req.Content, Scope: req.Scope,
		Tags: req.Tags, Target: req.Target, Payload: req.Payload, Provenance: req.Provenance,
		SupersededBy: req.Supersedes, ExpiresAt: req.ExpiresAt}, schema.MaxLimits))
}

// ValidateRecord checks a record for Import: a non-empty id and
// schema.CheckMemory, the one record validator save runs too, with
// schema.MaxLimits. An empty createdAt is allowed (the importer stamps it
// with now).
func ValidateRecord(r schema.MemoryRecord) error {
	if strings.TrimSpace(r.ID) == "" {
		return fmt.Errorf("%w: id is required", ErrInvalid)
	}
	return invalid(schema.CheckMemory(&r, schema.MaxLimits))
}

// invalid wraps a validation error in ErrInvalid.
func invalid(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v", ErrInvalid, err)
}

// CheckLimits is schema.Limits.CheckRecord wrapping ErrInvalid: the one
// limits check, which the surfaces run with the workspace's limits and the
// store's write paths with schema.MaxLimits.
func CheckLimits(l schema.Limits, r *schema.MemoryRecord) error {
	if err := l.CheckRecord(r); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}

func checkTime(name, v string) error {
	t, err := schema.ParseTime(v)
	if err != nil || schema.FormatTime(t) != v {
		return fmt.Errorf("%w: %s %q: want the canonical form, e.g. 2026-11-03T14:05:00.000Z", ErrInvalid, name, v)
	}
	return nil
}

// NewRecord builds the record a validated write request creates, so every
// backend stores the same shape: scope and tags copied, createdAt and
// updatedAt set to now, provenance.at defaulting to now and
// provenance.author to actor.String().
func NewRecord(req WriteRequest, id, now string, actor Actor) schema.MemoryRecord {
	r := schema.MemoryRecord{
		ID:         id,
		Scope:      maps.Clone(req.Scope),
		Kind:       req.Kind,
		Content:    req.Content,
		Tags:       slices.Clone(req.Tags),
		Provenance: req.Provenance,
		CreatedAt:  now,
		UpdatedAt:  now,
		ExpiresAt:  req.ExpiresAt,
	}
	if r.Scope == nil {
		r.Scope = map[string]string{}
	}
	if r.Provenance.At == "" {
		r.Provenance.At = now
	}
	if r.Provenance.Author == "" {
		r.Provenance.Author = actor.String()
	}
	if req.Target != nil {
		t := *req.Target
		r.Target = &t
	}
	if len(req.Payload) > 0 {
		r.Payload = slices.Clone(req.Payload)
	}
	return r
}

// ApplyInvalidate marks rec invalid at now with reason (the Invalidate
// mutation). It reports false, changing nothing, when rec is already invalid.
func ApplyInvalidate(rec *schema.MemoryRecord, now, reason string) bool {
	if rec.InvalidAt != "" {
		return false
	}
	rec.InvalidAt = now
	rec.InvalidReason = reason
	rec.UpdatedAt = now
	return true
}

// ApplySupersede marks old as superseded by newID at now: invalidAt,
// supersededBy and the reason "superseded by NEWID".
func ApplySupersede(old *schema.MemoryRecord, newID, now string) {
	old.InvalidAt = now
	old.InvalidReason = "superseded by " + newID
	old.SupersededBy = newID
	old.UpdatedAt = now
}

// ApplySupport appends s to rec's supports unless its conversation already
// taught the record (its provenance or an earlier support); it reports
// whether the support was new. Only a new support changes the record.
func ApplySupport(rec *schema.MemoryRecord, s schema.Support, now string) bool {
	if s.ConversationID == rec.Provenance.ConversationID {
		return false
	}
	for _, o := range rec.Supports {
		if o.ConversationID == s.ConversationID {
			return false
		}
	}
	rec.Supports = append(rec.Supports, s)
	rec.UpdatedAt = now
	return true
}

// NormalizeSupport validates a corroboration and stamps At with now when
// empty. The error wraps ErrInvalid.
func NormalizeSupport(s schema.Support, now string) (schema.Support, error) {
	if strings.TrimSpace(s.ConversationID) == "" {
		return s, fmt.Errorf("%w: corroboration needs a conversationId", ErrInvalid)
	}
	if err := CheckLimits(schema.MaxLimits, &schema.MemoryRecord{Supports: []schema.Support{s}}); err != nil {
		return s, err
	}
	if s.At == "" {
		s.At = now
	} else if err := checkTime("support at", s.At); err != nil {
		return s, err
	}
	return s, nil
}

// CloneRecord deep-copies a record (scope, tags, target, payload,
// supports), so in-memory backends never share mutable state with callers.
func CloneRecord(r schema.MemoryRecord) schema.MemoryRecord {
	if r.Scope != nil {
		r.Scope = maps.Clone(r.Scope)
	}
	r.Tags = slices.Clone(r.Tags)
	if r.Target != nil {
		t := *r.Target
		r.Target = &t
	}
	r.Payload = slices.Clone(r.Payload)
	r.Supports = slices.Clone(r.Supports)
	return r
}
