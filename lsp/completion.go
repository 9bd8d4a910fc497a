package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/lint"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/workspace"
)

// Completion answers textDocument/completion from the agent schema: the
// property keys valid at the cursor (with their description and whether
// required), enum values, existing judgment domains where a target names
// one, and snippets for a new judgment, example, awareness domain and
// responsibility. The place is found from the line being typed and the
// indentation of the lines above it (YAML) or a tolerant scan of the text
// before the cursor (JSON, jsonscan.go), so it works while the file does
// not parse. A workspace config (.agent-ls.yaml) completes from its own
// schema.
func (s *server) Completion(ctx context.Context, p *protocol.CompletionParams) (*protocol.CompletionList, error) {
	if _, err := s.confinedPath(p.TextDocument.URI); err != nil {
		return nil, err // never read a file outside the workspace
	}
	text, path, err := s.currentText(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	out := &protocol.CompletionList{Items: []protocol.CompletionItem{}}
	if text == nil {
		return out, nil
	}
	pos := clampPosition(text, p.Position)
	cc, ok := yamlContext(text, pos)
	if strings.EqualFold(filepath.Ext(path), ".json") {
		cc, ok = jsonScanContext(text, pos)
	}
	other := served(path) != nil
	if !ok || cc.key == "" && other {
		// Another file (a memory record's YAML, or any YAML an editor
		// asks about) gets the values of a record's keys, never an agent
		// file's keys and snippets.
		return out, nil
	}
	doc := s.parsedDocument(p.TextDocument.URI, path, text)
	if other && !recordShaped(doc, schema.JoinPointer(cc.parent, cc.key)) {
		// Not a memory record either: a Kubernetes manifest's kind is
		// not a memory kind.
		return out, nil
	}
	out.Items = completionItems(cc, doc, path)
	return out, nil
}

// currentText is the editor's text of uri (the disk's when not open) and its
// path; nil text when neither is readable, and errOutOfSync when the
// server lost the editor's text.
func (s *server) currentText(uri protocol.DocumentURI) ([]byte, string, error) {
	path := uriToPath(uri)
	if d, _ := s.latest(uri); d != nil {
		if d.outOfSync != "" {
			return nil, path, errOutOfSync(d)
		}
		return d.text, path, nil
	}
	if path == "" {
		return nil, "", nil
	}
	data, err := readEditorText(path)
	if err != nil {
		return nil, path, nil
	}
	return data, path, nil
}

// completionContext is what the cursor is typing.
type completionContext struct {
	// parent is the pointer of the object (or array) the typed key or item
	// belongs to; array indexes are the item's position among its siblings.
	parent string
	// key is set when a value is being typed: the key it belongs to.
	key string
	// dash is true when the line starts a sequence item ("- ").
	dash bool
	// replace is the range of the word being typed (replaced by an item).
	replace protocol.Range
	// indent is the column of the typed key (or of the dash); -1 for JSON.
	indent int
	// siblings are the keys already written beside the typed one, read
	// from the lines of its block.
	siblings map[string]bool
	// sep goes before an inserted JSON key or array item: ", " after a
	// value whose comma is not written yet.
	sep string
	// eol is the text's line break, for an item of several lines.
	eol string
}

var (
	keyLineRE = regexp.MustCompile(`^(\s*)(-\s+)?("?[^\s:#"][^:#"]*"?):(\s|$)`)
	typingRE  = regexp.MustCompile(`^(\s*)(-\s*)?([\w$.-]*)$`)
	valueRE   = regexp.MustCompile(`^(\s*)(-\s+)?([\w$.-]+):\s*([\w$.-]*)$`)
)

// yamlContext finds the completion context at pos from the text's lines.
func yamlContext(text []byte, pos protocol.Position) (completionContext, bool) {
	lines := splitLines(string(text))
	if int(pos.Line) >= len(lines) {
		return completionContext{}, false
	}
	// A byte order mark the client keeps is a character of line 0, before
	// YAML's columns: the lines are read without it, the cursor's
	// character one less on line 0.
	var bomShift uint32
	if strings.HasPrefix(lines[0], "\ufeff") {
		lines[0] = lines[0][len("\ufeff"):]
		if pos.Line == 0 && pos.Character > 0 {
			bomShift = 1
		}
	}
	line := lines[pos.Line]
	prefix := line[:byteOffset(line, int(pos.Character-bomShift))]
	var cc completionContext
	var word string
	var ind int
	if m := valueRE.FindStringSubmatch(prefix); m != nil {
		ind, cc.dash, cc.key, word = len(m[1]), m[2] != "", m[3], m[4]
	} else if m := typingRE.FindStringSubmatch(prefix); m != nil {
		ind, cc.dash, word = len(m[1]), m[2] != "", m[3]
	} else {
		return completionContext{}, false
	}
	start := len(prefix) - len(word)
	cc.replace = protocol.Range{
		Start: protocol.Position{Line: pos.Line, Character: bomShift + uint32(utf16Len([]byte(prefix[:start])))},
		End:   pos,
	}
	cc.indent = ind
	cc.eol = lineBreak(text)
	keyCol := ind
	if cc.dash {
		keyCol = len(prefix) - len(strings.TrimLeft(prefix[ind+1:], " ")) // after "- "
	}
	cc.siblings = siblingKeys(lines, int(pos.Line), keyCol, cc.dash)
	// Walk up: collect the keys and items that contain the cursor.
	var toks []string
	c, cIsDash := ind, false
	seqCol, idx := -1, -1 // the innermost item's dash column and its token
	if cc.dash {
		toks = append(toks, "0")
		seqCol, idx, cIsDash = ind, 0, true
	}
	for j := int(pos.Line) - 1; j >= 0 && c >= 0; j-- {
		l := lines[j]
		t := strings.TrimLeft(l, " ")
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "---") {
			continue
		}
		li := len(l) - len(t)
		dash := t == "-" || strings.HasPrefix(t, "- ")
		if dash && li == seqCol {
			toks[idx] = fmt.Sprint(atoi(toks[idx]) + 1)
			continue
		}
		if li > c || li == c && (dash || !cIsDash) {
			continue // deeper or beside: neither branch below takes it
		}
		m := keyLineRE.FindStringSubmatch(l)
		if dash && li < c {
			if m != nil && len(m[1])+len(m[2]) < c {
				toks = append(toks, strings.Trim(m[3], `"`))
			}
			toks = append(toks, "0")
			seqCol, idx, c, cIsDash = li, len(toks)-1, li, true
			continue
		}
		if !dash && m != nil && (li < c || (cIsDash && li == c)) {
			toks = append(toks, strings.Trim(m[3], `"`))
			seqCol, idx, c, cIsDash = -1, -1, li, false
		}
	}
	for i, j := 0, len(toks)-1; i < j; i, j = i+1, j-1 {
		toks[i], toks[j] = toks[j], toks[i]
	}
	cc.parent = schema.JoinPointer("", anySlice(toks)...)
	return cc, true
}

// siblingKeys reads the keys at column col of the block holding line l
// (l itself excluded); a line starting an item ("- key:") bounds the block.
func siblingKeys(lines []string, l, col int, dash bool) map[string]bool {
	out := map[string]bool{}
	scan := func(j int) (stop bool) {
		t := strings.TrimLeft(lines[j], " ")
		if t == "" || strings.HasPrefix(t, "#") {
			return false
		}
		li := len(lines[j]) - len(t)
		m := keyLineRE.FindStringSubmatch(lines[j])
		isDash := t == "-" || strings.HasPrefix(t, "- ")
		kc := li
		if m != nil {
			kc = len(m[1]) + len(m[2])
		}
		if li < col && !(isDash && kc == col) {
			return true
		}
		if m != nil && kc == col {
			out[strings.Trim(m[3], `"`)] = true
			return isDash && li < col
		}
		return false
	}
	if !dash {
		for j := l - 1; j >= 0 && !scan(j); j-- {
		}
	}
	for j := l + 1; j < len(lines); j++ {
		t := strings.TrimLeft(lines[j], " ")
		if isItem := t == "-" || strings.HasPrefix(t, "- "); isItem && len(lines[j])-len(t) < col {
			break
		}
		if scan(j) {
			break
		}
	}
	return out
}

// completionItems lists the items of a context.
func completionItems(cc completionContext, doc *schema.Document, path string) []protocol.CompletionItem {
	items := []protocol.CompletionItem{}
	edit := func(text string) *protocol.TextEdit { return &protocol.TextEdit{Range: cc.replace, NewText: text} }
	isJSON := cc.indent < 0
	if cc.key != "" {
		for _, v := range valueChoices(cc.parent, cc.key, doc, path) {
			text := schema.YAMLScalar(v.value)
			if isJSON {
				text = jsonString(v.value)
			}
			items = append(items, protocol.CompletionItem{Label: v.value, Kind: protocol.CompletionItemKindEnumMember,
				Detail: v.detail, TextEdit: edit(text)})
		}
		return items
	}
	sd := schemaDocOf(path)
	props := sd.Properties(cc.parent)
	if isJSON && cc.dash {
		props = nil // an array item: values only, keys go inside its braces
	}
	if len(props) == 0 && cc.dash {
		// An item of an array of scalars: its enum values, if any.
		for _, v := range valueChoices(schema.ParentPointer(cc.parent), lastToken(schema.ParentPointer(cc.parent)), doc, path) {
			text := schema.YAMLScalar(v.value)
			if isJSON {
				text = cc.sep + jsonString(v.value)
			}
			items = append(items, protocol.CompletionItem{Label: v.value, Kind: protocol.CompletionItemKindEnumMember, Detail: v.detail, TextEdit: edit(text)})
		}
	}
	present := map[string]bool{}
	for k := range cc.siblings {
		present[k] = true
	}
	if doc != nil {
		for _, c := range doc.Children(cc.parent) {
			present[lastToken(c)] = true
		}
	}
	if isWorkspaceConfig(path) && cc.parent == "/lint/rules" {
		// lint.rules is keyed by rule id: offer the rules not yet set.
		for _, r := range lint.Rules() {
			if present[r.ID] || schema.HardRule(r.ID) {
				// A hard rule (the ceiling) cannot be configured.
				continue
			}
			text := r.ID + ": "
			if isJSON {
				text = cc.sep + fmt.Sprintf("%q", r.ID)
			}
			items = append(items, protocol.CompletionItem{Label: r.ID, Kind: protocol.CompletionItemKindProperty,
				Detail: "lint rule (default " + r.DefaultSeverity + ")", TextEdit: edit(text),
				Documentation: protocol.MarkupContent{Kind: protocol.Markdown, Value: r.Doc}})
		}
	}
	for _, pr := range props {
		if present[pr.Name] {
			continue
		}
		detail := "optional"
		if pr.Required {
			detail = "required"
		}
		text := pr.Name + ": "
		if isJSON {
			text = cc.sep + fmt.Sprintf("%q", pr.Name)
		}
		it := protocol.CompletionItem{Label: pr.Name, Kind: protocol.CompletionItemKindProperty, Detail: detail,
			TextEdit: edit(text), SortText: sortKey(pr.Required, pr.Name)}
		if pr.Description != "" {
			it.Documentation = protocol.MarkupContent{Kind: protocol.Markdown, Value: pr.Description}
		}
		items = append(items, it)
	}
	if !isWorkspaceConfig(path) {
		items = append(items, snippetItems(cc)...)
	}
	return items
}

func sortKey(required bool, name string) string {
	if required {
		return "0" + name
	}
	return "1" + name
}

// snippet bodies: YAML one line per entry (the first line follows the
// "- "), JSON one object.
var snippets = map[string]struct {
	label string
	lines []string
	json  string
}{
	"/roleTemplate/judgments": {"new judgment", []string{"domain: ${1:domain}", "heuristics:", "  - ${2:heuristic}", "constraints:", "  - ${3:constraint}", "escalationTriggers:", "  - ${4:trigger}"},
		`{"domain": "${1:domain}", "heuristics": ["${2:heuristic}"], "constraints": ["${3:constraint}"], "escalationTriggers": ["${4:trigger}"]}`},
	"examples": {"new example", []string{"scenario: ${1:scenario}", "good: ${2:good response}", "bad: ${3:bad response}", "reasoning: ${4:why}"},
		`{"scenario": "${1:scenario}", "good": "${2:good response}", "bad": "${3:bad response}", "reasoning": "${4:why}"}`},
	"/awareness/domains": {"new awareness domain", []string{"name: ${1:name}", "description: ${2:what it holds}", "accessMethod: ${3:how the agent reads it}"},
		`{"name": "${1:name}", "description": "${2:what it holds}", "accessMethod": "${3:how the agent reads it}"}`},
	"/roleTemplate/responsibilities": {"new responsibility", []string{"key: ${1:key}", "name: ${2:name}", "description: ${3:what the duty is}"},
		`{"key": "${1:key}", "name": "${2:name}", "description": "${3:what the duty is}"}`},
}

// snippetItems offers the snippet of the array the cursor is in: on a "- "
// line for the item's body, on a bare line for a whole item.
func snippetItems(cc completionContext) []protocol.CompletionItem {
	array := cc.parent
	if cc.dash {
		array = schema.ParentPointer(cc.parent)
	}
	sn, ok := snippets[array]
	toks := schema.SplitPointer(array)
	if !ok && len(toks) == 4 && toks[0] == "roleTemplate" && toks[1] == "judgments" && toks[3] == "examples" {
		sn, ok = snippets["examples"]
	}
	if !ok {
		return nil
	}
	if cc.indent < 0 {
		// JSON: an item position in the array gets the object.
		if !cc.dash {
			return nil
		}
		return []protocol.CompletionItem{{
			Label: sn.label, Kind: protocol.CompletionItemKindSnippet, Detail: "snippet",
			InsertTextFormat: protocol.InsertTextFormatSnippet, InsertTextMode: protocol.InsertTextModeAsIs,
			TextEdit: &protocol.TextEdit{Range: cc.replace, NewText: cc.sep + sn.json},
		}}
	}
	pad := strings.Repeat(" ", cc.indent+2)
	body := make([]string, len(sn.lines))
	for i, l := range sn.lines {
		if i > 0 {
			l = pad + l
		}
		body[i] = l
	}
	text := strings.Join(body, cc.eol)
	if !cc.dash {
		text = "- " + text
	}
	return []protocol.CompletionItem{{
		Label: sn.label, Kind: protocol.CompletionItemKindSnippet, Detail: "snippet",
		InsertTextFormat: protocol.InsertTextFormatSnippet, InsertTextMode: protocol.InsertTextModeAsIs,
		TextEdit: &protocol.TextEdit{Range: cc.replace, NewText: text},
	}}
}

type choice struct{ value, detail string }

// valueChoices are the values offered for key under parent: the schema's
// enums by key name, and existing judgment domains for a target's domain.
func valueChoices(parent, key string, doc *schema.Document, path string) []choice {
	var out []choice
	add := func(detail string, vs ...string) {
		for _, v := range vs {
			out = append(out, choice{v, detail})
		}
	}
	// The schema's own enum at the value first (the workspace config's
	// eval.require and lint severities, the agent's source).
	enumPtr := schema.JoinPointer(parent, key)
	if isWorkspaceConfig(path) {
		add("allowed value", schemaDocOf(path).Enum(enumPtr)...)
		return out
	}
	if vs := schemaDocOf(path).Enum(enumPtr); len(vs) > 0 && schema.IsAgentFile(path) {
		add("allowed value", vs...)
		return out
	}
	switch key {
	case "section":
		add("background section", schema.BackgroundSections...)
		add("manual section", "workflows")
	case "slot":
		add("judgment slot", "heuristics", "constraints", "escalationTriggers")
	case "kind":
		add("memory kind", recordEnum("/properties/kind/enum")...)
	case "primitive":
		add("target primitive", recordEnum("/$defs/target/properties/primitive/enum")...)
	case "source":
		add("role source", "library", "custom")
	case "domain":
		toks := schema.SplitPointer(parent)
		if len(toks) >= 2 && toks[0] == "roleTemplate" && toks[1] == "judgments" {
			return nil // authoring a judgment's own domain
		}
		add("existing judgment domain", judgmentDomains(doc, path)...)
	}
	return out
}

// recordShaped reports whether doc reads as a memory record: a mapping
// whose every top-level key is one of the record schema's properties. A
// text that does not parse (mid-edit) is judged by at, the pointer being
// completed: its top-level key must be a record's.
func recordShaped(doc *schema.Document, at string) bool {
	props := schema.SchemaDocFor(schema.FileRecords).Properties("")
	isProp := func(name string) bool {
		return slices.ContainsFunc(props, func(p schema.SchemaProperty) bool { return p.Name == name })
	}
	if doc == nil {
		toks := schema.SplitPointer(at)
		return len(toks) > 0 && isProp(toks[0])
	}
	keys := doc.Children("")
	if len(keys) == 0 {
		return false
	}
	for _, k := range keys {
		if !isProp(lastToken(k)) {
			return false
		}
	}
	return true
}

// recordEnum reads an enum of the memory-record schema by JSON Pointer.
func recordEnum(ptr string) []string {
	var v any
	if err := json.Unmarshal(schema.RecordSchema, &v); err != nil {
		return nil
	}
	for _, tok := range schema.SplitPointer(ptr) {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[tok]
	}
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// judgmentDomains are the judgment domains of the document when it is an
// agent, else of the agent files beside it: those that are identifiers
// (schema.CheckIdentifier), never a sibling's line break or control
// character.
func judgmentDomains(doc *schema.Document, path string) []string {
	seen := map[string]bool{}
	collect := func(d *schema.Document) {
		for _, jp := range d.Children("/roleTemplate/judgments") {
			if v := stringAt(d, jp+"/domain"); v != "" && schema.CheckIdentifier("judgment domain", v) == nil {
				seen[v] = true
			}
		}
	}
	if doc != nil && doc.Has("/roleTemplate") {
		collect(doc)
	} else if path != "" {
		dir := filepath.Dir(path)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() || !schema.IsAgentFile(e.Name()) {
				continue
			}
			m := filepath.Join(dir, e.Name())
			if data, err := workspace.ReadFile(m); err == nil {
				if d, err := schema.ParseDocument(m, data); err == nil {
					collect(d)
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// byteOffset is the byte offset in line of a UTF-16 character column.
func byteOffset(line string, char int) int {
	n := 0
	for i, r := range line {
		if n >= char {
			return i
		}
		n += len(utf16.Encode([]rune{r}))
	}
	return len(line)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// schemaDocOf is the schema completion and hover read for path: the
// workspace config's for .agent-ls.yaml, else the agent schema.
func schemaDocOf(path string) *schema.SchemaDoc {
	if isWorkspaceConfig(path) {
		return schema.SchemaDocFor(schema.FileWorkspace)
	}
	return schema.SchemaDocFor(schema.FileAgent)
}

// keyDescription is the hover text of an authored key: its schema's
// description of it (what it means and how it renders in the prompt), as a
// markdown paragraph; "" when the schema does not describe it. A lint rule
// id under lint.rules of a workspace config is described by the rule.
func keyDescription(path, ptr string) string {
	if isWorkspaceConfig(path) {
		if id, ok := strings.CutPrefix(ptr, "/lint/rules/"); ok {
			for _, r := range lint.Rules() {
				if r.ID == schema.UnescapePointer(id) {
					return fmt.Sprintf("\nLint rule `%s`: %s (default severity %s).\n", r.ID, r.Doc, r.DefaultSeverity)
				}
			}
		}
	}
	d, ok := schemaDocOf(path).Describe(ptr)
	if !ok || d == "" {
		return ""
	}
	return "\n" + d + "\n"
}
