package schema

import "encoding/json"

// Kind classifies a memory record (ADR-0007).
type Kind string

// The memory kinds.
const (
	KindFact       Kind = "fact"
	KindPreference Kind = "preference"
	KindEpisode    Kind = "episode"
	KindProfile    Kind = "profile"
)

// Kinds lists every valid kind.
var Kinds = []Kind{KindFact, KindPreference, KindEpisode, KindProfile}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

// Provenance says where a memory came from: the conversation and run that
// taught it, who wrote it, and when.
type Provenance struct {
	ConversationID string `json:"conversationId,omitempty"`
	RunID          string `json:"runId,omitempty"`
	Author         string `json:"author,omitempty"`
	At             string `json:"at,omitempty"`
	// RestoredFrom names the retired version this record brings back
	// (agent-ls memory restore): carried in the hash-chained write or
	// supersede entry that creates the record.
	RestoredFrom string `json:"restoredFrom,omitempty"`
}

// Support is one corroboration of a record: another episode that taught the
// same lesson.
type Support struct {
	ConversationID string `json:"conversationId"`
	RunID          string `json:"runId,omitempty"`
	At             string `json:"at"`
}

// MemoryRecord is one stored memory. Timestamps use the fixed-width format of
// FormatTime, so string order is time order.
type MemoryRecord struct {
	ID            string            `json:"id"`
	Scope         map[string]string `json:"scope"`
	Kind          Kind              `json:"kind"`
	Content       string            `json:"content"`
	Tags          []string          `json:"tags,omitempty"`
	Provenance    Provenance        `json:"provenance"`
	CreatedAt     string            `json:"createdAt"`
	UpdatedAt     string            `json:"updatedAt"`
	InvalidAt     string            `json:"invalidAt,omitempty"`
	InvalidReason string            `json:"invalidReason,omitempty"`
	SupersededBy  string            `json:"supersededBy,omitempty"`
	ExpiresAt     string            `json:"expiresAt,omitempty"`
	Target        *MemoryTarget     `json:"target,omitempty"`
	Payload       json.RawMessage   `json:"payload,omitempty"`
	Supports      []Support         `json:"supports,omitempty"`
}

// Valid reports whether the record is live at time now (a FormatTime string):
// not invalidated and not expired.
func (r *MemoryRecord) Valid(now string) bool {
	if r.InvalidAt != "" && r.InvalidAt <= now {
		return false
	}
	if r.ExpiresAt != "" && r.ExpiresAt <= now {
		return false
	}
	return true
}

// DistinctConversations counts the distinct conversations that taught the
// record: its own provenance plus its supports. Empty ids do not count.
func (r *MemoryRecord) DistinctConversations() int {
	seen := map[string]bool{}
	if k := conversationKey(r.Provenance.ConversationID); k != "" {
		seen[k] = true
	}
	for _, s := range r.Supports {
		if k := conversationKey(s.ConversationID); k != "" {
			seen[k] = true
		}
	}
	return len(seen)
}

// ExamplePayload is the structured payload of an example-targeted record.
type ExamplePayload struct {
	Scenario  string `json:"scenario"`
	Good      string `json:"good"`
	Bad       string `json:"bad,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
}

// AwarenessPayload is the structured payload of an awareness-targeted record.
type AwarenessPayload = AwarenessDomain
