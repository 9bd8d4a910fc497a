package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// CheckMemory is the one validator of a memory record, whichever door it
// arrives by: save and save-batch (through the store's write check), MCP,
// the language server and import (memory import, the store's Import) all
// call it, so a record that save accepts survives export → import and
// import refuses nothing save let in. It checks, in this order:
//
//   - kind is one of Kinds and content is not blank;
//   - every scope key and value (CheckScopePart) and every tag
//     (CheckIdentifier) passes the identifier rule;
//   - the target is a well-formed member of the union whose free-text parts
//     pass the identifier rule (MemoryTarget.Validate);
//   - the payload, when there is one, is a JSON object of the target's shape
//     (CheckPayload);
//   - the sizes and characters of l.CheckRecord (content carries no control
//     character but newline and tab, and no bidi control);
//   - every timestamp that is set is in the canonical form (FormatTime), and
//     every support names its conversation.
//
// Fields a write does not set yet (id, createdAt, updatedAt) are checked
// only when set; whether they are required is the caller's rule. The error
// names the field; callers wrap it (the store in ErrInvalid).
func CheckMemory(r *MemoryRecord, l Limits) error {
	if !r.Kind.Valid() {
		return fmt.Errorf("kind %s is not one of fact, preference, episode, profile", quoteShort(string(r.Kind)))
	}
	if strings.TrimSpace(r.Content) == "" {
		return fmt.Errorf("content is empty")
	}
	if len(r.Scope) > 0 {
		for _, k := range slices.Sorted(maps.Keys(r.Scope)) {
			if k == "" {
				return fmt.Errorf("scope has an empty key")
			}
			if r.Scope[k] == "" {
				return fmt.Errorf("scope key %s has an empty value", quoteShort(k))
			}
			if err := CheckScopePart("scope key", k); err != nil {
				return err
			}
			if err := CheckScopePart("scope value", r.Scope[k]); err != nil {
				return err
			}
		}
	}
	for i, t := range r.Tags {
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("tags[%d] is empty", i)
		}
		if err := CheckIdentifier(fmt.Sprintf("tags[%d]", i), t); err != nil {
			return err
		}
	}
	if r.Target != nil {
		if err := r.Target.Validate(); err != nil {
			return err
		}
	}
	if err := CheckPayload(r.Target, r.Payload); err != nil {
		return err
	}
	if err := l.CheckRecord(r); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{
		{"createdAt", r.CreatedAt}, {"updatedAt", r.UpdatedAt}, {"invalidAt", r.InvalidAt}, {"expiresAt", r.ExpiresAt},
		{"provenance.at", r.Provenance.At},
	} {
		if err := checkCanonicalTime(f.name, f.v); err != nil {
			return err
		}
	}
	for i, s := range r.Supports {
		if s.ConversationID == "" {
			return fmt.Errorf("supports[%d]: conversationId is required", i)
		}
		if err := checkCanonicalTime(fmt.Sprintf("supports[%d].at", i), s.At); err != nil {
			return err
		}
	}
	return nil
}

// checkCanonicalTime refuses a set timestamp v that is not in the canonical
// form of FormatTime.
func checkCanonicalTime(name, v string) error {
	if v == "" {
		return nil
	}
	t, err := ParseTime(v)
	if err != nil || FormatTime(t) != v {
		return fmt.Errorf("%s %s: want the canonical form, e.g. 2026-11-03T14:05:00.000Z", name, quoteShort(v))
	}
	return nil
}

// payloadSchema is the record schema's rule for a payload under a target of
// primitive prim: $defs/examplePayload, $defs/awarenessPayload, or any
// object. It validates a document {"payload": PAYLOAD}, so its problems
// carry the pointers and messages import reports for a whole record
// ("/payload/foo: unknown property \"foo\"").
func payloadSchema(prim Primitive) compiled {
	return payloadSchemas()[prim]
}

var payloadSchemas = sync.OnceValue(func() map[Primitive]compiled {
	out := map[Primitive]compiled{}
	for _, prim := range Primitives {
		ref := `{"type": "object"}`
		switch prim {
		case PrimitiveExample:
			ref = `{"$ref": "memory-record.schema.json#/$defs/examplePayload"}`
		case PrimitiveAwareness:
			ref = `{"$ref": "memory-record.schema.json#/$defs/awarenessPayload"}`
		}
		id := "https://agent-ls.dev/schema/payload-" + string(prim) + ".json"
		src := `{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "` + id + `", "type": "object", "properties": {"payload": ` + ref + `}}`
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		err := c.AddResource(RecordSchemaID, bytes.NewReader(RecordSchema))
		if err == nil {
			err = c.AddResource(id, strings.NewReader(src))
		}
		var sch *jsonschema.Schema
		if err == nil {
			sch, err = c.Compile(id)
		}
		if err != nil {
			out[prim] = compiled{err: fmt.Errorf("payload schema %s: %w", prim, err)}
			continue
		}
		out[prim] = compiled{schema: sch}
	}
	return out
})

// CheckPayload is the one check of a record's payload (part of
// CheckMemory). None at all is fine (a targeted record without one is
// stored but cannot promote: evolve's gate). One that is there must be what
// the record schema (memory-record.schema.json) allows under the record's
// target — for an example exactly scenario and good (required, non-empty),
// bad and reasoning; for an awareness domain exactly name, description and
// accessMethod (all required, non-empty); else any JSON object — reported
// with the pointers and messages import gives for a whole record. Beyond
// the schema, every string of an example or awareness payload carries no
// control character but newline and tab and no bidi control, and an
// awareness name passes the identifier rule.
func CheckPayload(t *MemoryTarget, payload json.RawMessage) error {
	if len(payload) == 0 {
		return nil
	}
	if !json.Valid(payload) {
		return fmt.Errorf("payload is not valid JSON")
	}
	prim := PrimitiveBackground // any object
	if t != nil {
		prim = t.Primitive
	}
	c := payloadSchema(prim)
	if c.schema == nil {
		if c.err != nil {
			return c.err
		}
		c = payloadSchema(PrimitiveBackground)
	}
	doc := make([]byte, 0, len(payload)+12)
	doc = append(append(append(doc, `{"payload":`...), payload...), '}')
	d, err := ParseDocument("payload.json", doc)
	if err != nil {
		return fmt.Errorf("payload: %v", err)
	}
	if ps := validateWith(d, c); len(ps) > 0 {
		return fmt.Errorf("%s", pointerMessages(ps))
	}
	if prim != PrimitiveExample && prim != PrimitiveAwareness {
		return nil
	}
	var fields map[string]string
	if err := json.Unmarshal(payload, &fields); err != nil {
		return fmt.Errorf("payload: %v", err)
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if prim == PrimitiveAwareness && k == "name" {
			if err := CheckIdentifier("/payload/name", fields[k]); err != nil {
				return err
			}
			continue
		}
		if err := CheckText("/payload/"+k, fields[k], MaxLimits.Payload, "payload", true); err != nil {
			return err
		}
	}
	return nil
}
