package lsp

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/schema"
)

var (
	unknownPropRE = regexp.MustCompile(`^unknown property "([^"]+)"$`)
	missingPropRE = regexp.MustCompile(`^missing required property "([^"]+)"$`)
	// unknownDomainRE reads the domain of lint's unknown-domain message,
	// quoted Go-style (%q): strconv.Unquote reads it back.
	unknownDomainRE = regexp.MustCompile(`targets judgment domain ("(?:[^"\\]|\\.)*"), which the agent does not define`)
	// unknownDomainRecordRE reads the record id of lint's unknown-domain
	// message ("memory ID targets judgment domain ..." or "candidate ID ...").
	unknownDomainRecordRE = regexp.MustCompile(`^(?:memory|candidate) (\S+) targets judgment domain ("(?:[^"\\]|\\.)*")`)
)

// quickFixes answers the schema diagnostics in the request's context with
// text edits: a misspelled key becomes the nearest valid key (only when one
// key is nearest), and a missing required property is inserted with a
// placeholder value.
func quickFixes(f *agentFile, p *protocol.CodeActionParams) []protocol.CodeAction {
	out := []protocol.CodeAction{}
	for _, d := range p.Context.Diagnostics {
		if fmt.Sprint(d.Code) == "unknown-domain" {
			if m := unknownDomainRE.FindStringSubmatch(d.Message); m != nil {
				if dom, err := strconv.Unquote(m[1]); err == nil {
					if a := addJudgmentFix(f, d, dom); a != nil {
						out = append(out, *a)
					}
				}
			}
			continue
		}
		if fmt.Sprint(d.Code) != "schema" {
			continue
		}
		var action *protocol.CodeAction
		if m := unknownPropRE.FindStringSubmatch(d.Message); m != nil {
			action = renameKeyFix(f, d, m[1])
		} else if m := missingPropRE.FindStringSubmatch(d.Message); m != nil {
			action = insertPropertyFix(f, d, m[1])
		}
		if action != nil {
			out = append(out, *action)
		}
	}
	return out
}

// renameKeyFix replaces an unknown key by the one valid key nearest to it
// by edit distance, if exactly one is nearest and it is near enough.
func renameKeyFix(f *agentFile, d protocol.Diagnostic, key string) *protocol.CodeAction {
	ptr := nodeWithKeyRange(f.doc, d.Range)
	if ptr == "" {
		return nil
	}
	best, ok := schema.SuggestKey(f.doc, schema.KindOf(f.path), ptr)
	if !ok || best == "" {
		return nil
	}
	newText := best
	if r, _ := f.doc.KeyRange(ptr); strings.HasPrefix(string(f.text[r.Start.Offset:r.End.Offset]), `"`) {
		newText = `"` + best + `"`
	}
	return editAction(f, d, fmt.Sprintf("Change %q to %q", key, best), protocol.TextEdit{Range: d.Range, NewText: newText})
}

// insertPropertyFix adds a missing required property after the object's
// last member, at its members' indentation, with a placeholder value.
func insertPropertyFix(f *agentFile, d protocol.Diagnostic, prop string) *protocol.CodeAction {
	ptr, ok := nodeWithKeyRangeOK(f.doc, d.Range)
	if !ok || !f.doc.IsObject(ptr) {
		return nil
	}
	kids := f.doc.Children(ptr)
	if len(kids) == 0 {
		return nil
	}
	first, _ := f.doc.KeyRange(kids[0])
	last := kids[len(kids)-1]
	lastVal, _ := f.doc.ValueRange(last)
	var text string
	var at protocol.Position
	// The placeholder has the property's type, so the fix leaves no type
	// error behind (an object {}, a list of one TODO, a count of 1).
	placeholder := "TODO"
	switch schema.SchemaDocFor(schema.KindOf(f.path)).Type(schema.JoinPointer(ptr, prop)) {
	case "object":
		placeholder = "{}"
	case "array":
		placeholder = "[TODO]"
	case "integer", "number":
		placeholder = "1"
	case "boolean":
		placeholder = "false"
	}
	if strings.EqualFold(filepath.Ext(f.path), ".json") {
		switch placeholder {
		case "TODO":
			placeholder = `"TODO"`
		case "[TODO]":
			placeholder = `["TODO"]`
		}
		at = toPosition(lastVal.End)
		text = ", " + jsonString(prop) + ": " + placeholder
	} else {
		objVal, _ := f.doc.ValueRange(ptr)
		if objVal.Start.Offset < len(f.text) && f.text[objVal.Start.Offset] == '{' {
			return nil // flow mapping: no block line to add
		}
		at = lineEndBefore(f.text, lastVal.End)
		text = lineBreak(f.text) + indentAt(f.text, first.Start) + prop + ": " + placeholder
	}
	return editAction(f, d, fmt.Sprintf("Add required property %q", prop), protocol.TextEdit{Range: protocol.Range{Start: at, End: at}, NewText: text})
}

// addJudgmentFix answers a memory that targets an undefined judgment domain
// with a new judgment of that domain after the last one, so the memory
// applies. (retargetFixes offers moving the memory to an existing domain
// instead.)
func addJudgmentFix(f *agentFile, d protocol.Diagnostic, domain string) *protocol.CodeAction {
	const list = "/roleTemplate/judgments"
	kids := f.doc.Children(list)
	if len(kids) == 0 || !f.doc.IsArray(list) {
		return nil
	}
	first, _ := f.doc.KeyRange(kids[0])
	lastVal, _ := f.doc.ValueRange(kids[len(kids)-1])
	var text string
	var at protocol.Position
	if strings.EqualFold(filepath.Ext(f.path), ".json") {
		at = toPosition(lastVal.End)
		text = `, {"domain": ` + jsonString(domain) + `}`
	} else {
		if listVal, _ := f.doc.ValueRange(list); listVal.Start.Offset < len(f.text) && f.text[listVal.Start.Offset] == '[' {
			return nil // flow sequence
		}
		at = lineEndBefore(f.text, lastVal.End)
		text = lineBreak(f.text) + indentAt(f.text, first.Start) + "- domain: " + schema.YAMLScalar(domain)
	}
	return editAction(f, d, fmt.Sprintf("Add judgment domain %q", domain), protocol.TextEdit{Range: protocol.Range{Start: at, End: at}, NewText: text})
}

// indentAt is the indentation that puts a new line's key in the column of
// the key at p: p's character, less a byte order mark before it on line 0
// (a character of the editor's text, not of YAML's columns).
func indentAt(text []byte, p schema.Position) string {
	n := p.Character
	if p.Line == 0 && bytes.HasPrefix(text, []byte("\ufeff")) {
		n--
	}
	return strings.Repeat(" ", max(n, 0))
}

// lineEndBefore is the end of the line a value ending at end finishes on
// (a block value ends at the start of the next line).
func lineEndBefore(text []byte, end schema.Position) protocol.Position {
	line := end.Line
	if end.Character == 0 && line > 0 {
		line--
	}
	return protocol.Position{Line: uint32(line), Character: uint32(lineLengthUTF16(text, line))}
}

func editAction(f *agentFile, d protocol.Diagnostic, title string, e protocol.TextEdit) *protocol.CodeAction {
	return &protocol.CodeAction{
		Title: title, Kind: protocol.QuickFix, Diagnostics: []protocol.Diagnostic{d}, IsPreferred: true,
		Edit: f.edit(e),
	}
}

// nodeWithKeyRange is the deepest node (not the root) whose key spans r.
func nodeWithKeyRange(d *schema.Document, r protocol.Range) string {
	ptr, ok := nodeWithKeyRangeOK(d, r)
	if !ok {
		return ""
	}
	return ptr
}

// nodeWithKeyRangeOK is the deepest node whose key spans r, the root
// included (its "key" is its first line).
func nodeWithKeyRangeOK(d *schema.Document, r protocol.Range) (string, bool) {
	found, ok := "", false
	var walk func(ptr string)
	walk = func(ptr string) {
		if kr, has := d.KeyRange(ptr); has && toRange(kr) == r {
			found, ok = ptr, true
		}
		for _, c := range d.Children(ptr) {
			walk(c)
		}
	}
	walk("")
	return found, ok
}

// retargetFixes answers each unknown-domain diagnostic in the request with
// one action per judgment domain the agent has, nearest to the unknown
// domain (edit distance) first: "Retarget memory to judgment domain Y"
// runs agent-ls.retarget with the record's target moved to Y. The record's
// target is read from the store (the message names the record).
func retargetFixes(f *agentFile, p *protocol.CodeActionParams, get func(id string) (schema.MemoryRecord, bool)) []protocol.CodeAction {
	var out []protocol.CodeAction
	for _, d := range p.Context.Diagnostics {
		if fmt.Sprint(d.Code) != "unknown-domain" {
			continue
		}
		m := unknownDomainRecordRE.FindStringSubmatch(d.Message)
		if m == nil {
			continue
		}
		rec, ok := get(m[1])
		if !ok || rec.Target == nil {
			continue
		}
		domains := judgmentDomains(f.doc, f.path)
		unknown, err := strconv.Unquote(m[2])
		if err != nil {
			continue
		}
		sort.SliceStable(domains, func(i, j int) bool {
			return schema.EditDistance(strings.ToLower(unknown), strings.ToLower(domains[i])) < schema.EditDistance(strings.ToLower(unknown), strings.ToLower(domains[j]))
		})
		for _, dom := range domains {
			to := *rec.Target
			switch to.Primitive {
			case schema.PrimitiveJudgment:
				to.Domain = dom
			case schema.PrimitiveExample:
				to.JudgmentDomain = dom
			default:
				continue
			}
			title := fmt.Sprintf("Retarget memory to judgment domain %q", dom)
			out = append(out, protocol.CodeAction{
				Title: title, Kind: protocol.QuickFix, Diagnostics: []protocol.Diagnostic{d},
				Command: &protocol.Command{Title: title, Command: CommandRetarget, Arguments: []any{map[string]any{
					"uri": f.uri, "recordId": rec.ID, "target": to.String()}}},
			})
		}
	}
	return out
}
