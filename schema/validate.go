package schema

import (
	"bytes"
	_ "embed" // the committed JSON Schemas
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The JSON Schemas (draft 2020-12), embedded from the files committed next
// to this package so editors can use them too.
var (
	//go:embed agent.schema.json
	AgentSchema []byte
	//go:embed memory-record.schema.json
	RecordSchema []byte
	//go:embed workspace.schema.json
	WorkspaceSchema []byte
)

// Schema ids, as the files' $id.
const (
	AgentSchemaID     = "https://agent-ls.dev/schema/agent.schema.json"
	RecordSchemaID    = "https://agent-ls.dev/schema/memory-record.schema.json"
	WorkspaceSchemaID = "https://agent-ls.dev/schema/workspace.schema.json"
)

// Severities of a Problem, as LSP names them.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
	SeverityHint    = "hint"
)

// RuleSchema is the rule id of JSON Schema problems.
const RuleSchema = "schema"

// Problem is one finding about a document, at a precise range.
type Problem struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Pointer  string `json:"pointer"`
	Range    Range  `json:"range"`
}

// IsAgentFile reports whether a file name is an agent file: *.agent.yaml,
// *.agent.yml or *.agent.json.
func IsAgentFile(name string) bool {
	base := strings.ToLower(filepath.Base(name))
	for _, ext := range []string{".agent.yaml", ".agent.yml", ".agent.json"} {
		if strings.HasSuffix(base, ext) && len(base) > len(ext) {
			return true
		}
	}
	return false
}

type compiled struct {
	schema *jsonschema.Schema
	err    error
}

// compile compiles one of the embedded schemas once, when first needed:
// trusted (compileTrusted) when it can, else checked against the draft
// 2020-12 metaschema.
func compile(id string, src []byte) func() compiled {
	return sync.OnceValue(func() compiled {
		if c, ok := compileTrusted(id, src); ok {
			return c
		}
		return compileChecked(id, src)
	})
}

// compileChecked compiles a schema as the validator does by default: the
// schema itself is first validated against its draft's metaschema.
func compileChecked(id string, src []byte) compiled {
	return compileWith(id, src, jsonschema.Draft2020)
}

func compileWith(id string, src []byte, draft *jsonschema.Draft) compiled {
	c := jsonschema.NewCompiler()
	c.Draft = draft
	if err := c.AddResource(id, bytes.NewReader(src)); err != nil {
		return compiled{err: fmt.Errorf("schema %s: %w", id, err)}
	}
	s, err := c.Compile(id)
	if err != nil {
		return compiled{err: fmt.Errorf("schema %s: %w", id, err)}
	}
	return compiled{schema: s}
}

var (
	agentSchema     = compile(AgentSchemaID, AgentSchema)
	recordSchema    = compile(RecordSchemaID, RecordSchema)
	workspaceSchema = compile(WorkspaceSchemaID, WorkspaceSchema)
)

// ValidateAgent checks an agent document against the agent schema and
// reports every error at its node, rule "schema": a missing required
// property on its parent's key, an unknown property on its own key, a wrong
// value on the value. It also reports duplicate judgment domains.
func ValidateAgent(d *Document) []Problem {
	c := agentSchema()
	return agentProblems(d, c, validateValue(c, d.Value()))
}

// agentProblems are ValidateAgent's problems from the validator's result.
func agentProblems(d *Document, c compiled, verr error) []Problem {
	if p, ok := notAgentFile(d); ok {
		return []Problem{p}
	}
	ps := problemsOf(d, c, verr)
	if len(ps) == 0 {
		ps = append(ps, duplicateDomains(d)...)
		ps = append(ps, identifierProblems(d)...)
		ps = sortProblems(ps)
	}
	if lb := lineBreakProblems(d); len(lb) > 0 {
		ps = sortProblems(append(ps, lb...))
	}
	return ps
}

// RuleYAMLLineBreak is the rule id of lineBreakProblems.
const RuleYAMLLineBreak = "yaml-line-break"

// MaxLineBreakProblems bounds lineBreakProblems: the last one counts the
// characters past it.
const MaxLineBreakProblems = 100

// lineBreakProblems warns of each U+0085, U+2028 and U+2029 of a YAML
// file: YAML ends a line there, an editor does not, so the reader sees one
// line where YAML reads two. In a comment, what follows the character is
// read as YAML the reader takes for the comment's text.
func lineBreakProblems(d *Document) []Problem {
	var out []Problem
	for i, r := range d.unicodeBreaks {
		c, _ := utf8.DecodeRune(d.src[r.Start.Offset:])
		name := map[rune]string{0x85: "next line", 0x2028: "line separator", 0x2029: "paragraph separator"}[c]
		msg := fmt.Sprintf("%U (%s) ends a line for YAML but not in an editor: what follows it on this line is read as the next line, not as the text it seems to continue", c, name)
		if i == len(d.unicodeBreaks)-1 && d.moreBreaks > 0 {
			msg += fmt.Sprintf(" (and %d more such characters after it, not marked)", d.moreBreaks)
		}
		out = append(out, Problem{Rule: RuleYAMLLineBreak, Severity: SeverityWarning, Range: r, Message: msg})
	}
	return out
}

// identifierProblems reports the agent file's identifiers that break the
// identifier rule (CheckIdentifier): the agent's name, its judgment
// domains, its awareness domains' names and its background keys (on the
// key). Memories name these; the prompt prints them.
func identifierProblems(d *Document) []Problem {
	var out []Problem
	// The range is looked up only for a problem: a large agent file has
	// thousands of keys, each checked on every keystroke.
	check := func(field, ptr, s string, rangeOf func(string) (Range, bool)) {
		if err := CheckIdentifier(field, s); err != nil {
			r, _ := rangeOf(ptr)
			out = append(out, Problem{Rule: RuleSchema, Severity: SeverityError, Pointer: ptr, Range: r, Message: err.Error()})
		}
	}
	value := func(field, ptr string) {
		if v, ok := d.ValueAt(ptr); ok {
			if s, isStr := v.(string); isStr {
				check(field, ptr, s, d.ValueRange)
			}
		}
	}
	value("agent name", "/roleTemplate/name")
	for _, jp := range d.Children("/roleTemplate/judgments") {
		value("judgment domain", jp+"/domain")
	}
	for _, ap := range d.Children("/awareness/domains") {
		value("awareness name", ap+"/name")
	}
	for _, sec := range BackgroundSections {
		for _, kp := range d.Children("/background/" + sec) {
			check("background key", kp, lastToken(kp), d.KeyRange)
		}
	}
	return out
}

// ValidateRecord checks a memory-record document against the record schema.
func ValidateRecord(d *Document) []Problem { return validateWith(d, recordSchema()) }

// ValidateRecordJSON checks one memory record in JSON (a JSONL line) against
// the record schema; the error lists every problem by JSON pointer. The
// schema cannot say everything (the identifier rule, control and bidi
// characters, sizes): import runs CheckMemory, the one record validator save
// runs too, on the decoded record after it (store.ValidateRecord).
func ValidateRecordJSON(data []byte) error {
	d, err := ParseDocument("record.json", data)
	if err != nil {
		return err
	}
	if ps := ValidateRecord(d); len(ps) > 0 {
		return fmt.Errorf("invalid memory record: %s", pointerMessages(ps))
	}
	return nil
}

// pointerMessages lists problems as "POINTER: MESSAGE; ...".
func pointerMessages(ps []Problem) string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		ptr := p.Pointer
		if ptr == "" {
			ptr = "/"
		}
		msgs[i] = ptr + ": " + p.Message
	}
	return strings.Join(msgs, "; ")
}

// DecodeAgent decodes a (validated) agent document into its typed config,
// keeping the authored order of background entries. It reads the parsed
// node tree directly (no JSON round trip); unknown fields are an error.
func DecodeAgent(d *Document) (*AgentConfig, error) {
	var cfg AgentConfig
	if err := decodeNode(d.root, reflect.ValueOf(&cfg).Elem()); err != nil {
		return nil, fmt.Errorf("%s: decode agent: %w", d.Filename(), err)
	}
	return &cfg, nil
}

// LoadAgent parses, validates and decodes an agent file. A malformed file
// gives a *ParseError; a file with schema problems gives the document and
// its problems but no config.
//
// The agent schema compiles (once a process) on a second goroutine while
// the file is parsed, and the schema validation of the parsed values runs
// on one while the document's pointer index and line tables are built.
func LoadAgent(filename string, data []byte, opts ...ParseOption) (*Document, *AgentConfig, []Problem, error) {
	return loadAgent(filename, data, nil, nil, parseOptions(opts))
}

// LoadAgentEarly is LoadAgent that calls parsed (when not nil) as soon as
// the file has parsed, before it is validated, with its roleTemplate.name
// as written ("" when that is missing or not a string): a caller may start
// work that needs only the agent's name, such as reading its memories, and
// must check the name against the decoded config before using that work.
func LoadAgentEarly(filename string, data []byte, parsed func(name string)) (*Document, *AgentConfig, []Problem, error) {
	return loadAgent(filename, data, parsed, nil, parseOpts{})
}

// loadAgent is LoadAgentEarly that parses YAML through cache (when not
// nil).
func loadAgent(filename string, data []byte, parsed func(name string), cache *ParseCache, o parseOpts) (*Document, *AgentConfig, []Problem, error) {
	_, _, wait := loadStaged(filename, data, parsed, cache, false, o)
	return wait()
}

// LoadAgentStaged is LoadAgent in two stages, for a caller with work that
// needs the decoded agent but not its schema problems: it returns, as soon
// as the file is parsed and decoded, the document and the agent decoded
// from it (both nil when it does not parse; the agent nil when it does not
// decode), while schema validation runs on another goroutine; wait returns
// what LoadAgent returns. Work done on the early agent is valid only when
// wait returns that same agent: an agent with schema errors is not one.
func (c *ParseCache) LoadAgentStaged(filename string, data []byte, opts ...ParseOption) (*Document, *AgentConfig, func() (*Document, *AgentConfig, []Problem, error)) {
	return loadStaged(filename, data, nil, c, true, parseOptions(opts))
}

// loadStaged is LoadAgentStaged; early decodes the agent before the
// validation is done (else only when it found no errors).
func loadStaged(filename string, data []byte, parsed func(name string), cache *ParseCache, early bool, o parseOpts) (*Document, *AgentConfig, func() (*Document, *AgentConfig, []Problem, error)) {
	schemaReady := make(chan compiled, 1)
	go func() { schemaReady <- agentSchema() }()
	d, err := parseTreeWith(filename, data, cache, o)
	if err != nil {
		return nil, nil, func() (*Document, *AgentConfig, []Problem, error) { return nil, nil, nil, err }
	}
	if parsed != nil {
		parsed(rawAgentName(d.root.value))
	}
	c := <-schemaReady
	done := make(chan error, 1)
	// A value equal to the last one the cache saw has its answers already
	// (its problems are placed in this document all the same).
	prev := cache.lookup(d.root.value)
	if prev != nil {
		done <- prev.invalid
	} else {
		go func() {
			defer func() {
				if r := recover(); r != nil {
					done <- fmt.Errorf("schema validator failed: %v", r)
				}
			}()
			done <- validateValue(c, d.root.value)
		}()
	}
	d.finish()
	var cfg *AgentConfig
	var decodeErr error
	decoded := false
	if prev != nil && prev.cfg != nil {
		cfg, decoded = prev.cfg, true
	} else if early {
		func() {
			defer func() {
				if recover() != nil { // decoded again, after validation, as LoadAgent does
					cfg, decodeErr, decoded = nil, nil, false
				}
			}()
			cfg, decodeErr = DecodeAgent(d)
			decoded = true
		}()
	}
	wait := sync.OnceValues(func() (loadResult, error) {
		invalid := <-done
		ps := agentProblems(d, c, invalid)
		if hasErrors(ps) {
			if prev == nil {
				cache.keep(&validated{value: d.root.value, invalid: invalid})
			}
			return loadResult{d, nil, ps}, nil
		}
		if !decoded {
			cfg, decodeErr = DecodeAgent(d)
		}
		if prev == nil || prev.cfg == nil {
			kept := &validated{value: d.root.value, invalid: invalid}
			if decodeErr == nil {
				kept.cfg = cfg
			}
			cache.keep(kept)
		}
		if decodeErr != nil {
			return loadResult{d, nil, ps}, decodeErr
		}
		return loadResult{d, cfg, ps}, nil
	})
	var earlyCfg *AgentConfig
	if decoded && decodeErr == nil {
		earlyCfg = cfg
	}
	return d, earlyCfg, func() (*Document, *AgentConfig, []Problem, error) {
		r, err := wait()
		return r.doc, r.cfg, r.problems, err
	}
}

// loadResult is what LoadAgent returns but its error.
type loadResult struct {
	doc      *Document
	cfg      *AgentConfig
	problems []Problem
}

// rawAgentName is roleTemplate.name of a parsed, unvalidated agent value.
func rawAgentName(v any) string {
	root, _ := v.(map[string]any)
	rt, _ := root["roleTemplate"].(map[string]any)
	name, _ := rt["name"].(string)
	return name
}

func hasErrors(ps []Problem) bool {
	for _, p := range ps {
		if p.Severity == SeverityError {
			return true
		}
	}
	return false
}

func decodeLoose(v any, out any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

func validateWith(d *Document, c compiled) []Problem {
	return problemsOf(d, c, validateValue(c, d.Value()))
}

// validateValue validates a generic value against a compiled schema (nil
// when the schema did not compile: problemsOf reports that). A value
// quickValid finds valid is not validated again; any other goes to the
// validator, whose errors are the problems.
func validateValue(c compiled, v any) error {
	if c.err != nil {
		return nil
	}
	if valid, ok := quickValid(c.schema, v); ok && valid {
		return nil
	}
	return c.schema.Validate(v)
}

// problemsOf maps the validator's result for d to problems at precise
// ranges.
func problemsOf(d *Document, c compiled, err error) []Problem {
	if c.err != nil {
		return []Problem{{Rule: RuleSchema, Severity: SeverityError, Message: "internal error: " + c.err.Error(), Range: d.rootRange()}}
	}
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Rule: RuleSchema, Severity: SeverityError, Message: err.Error(), Range: d.rootRange()}}
	}
	var out []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, leafProblems(d, e)...)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return sortProblems(out)
}

// sortProblems orders problems by position, then message, and drops exact
// duplicates.
func sortProblems(ps []Problem) []Problem {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Range.Start.Offset != b.Range.Start.Offset {
			return a.Range.Start.Offset < b.Range.Start.Offset
		}
		if a.Range.End.Offset != b.Range.End.Offset {
			return a.Range.End.Offset < b.Range.End.Offset
		}
		return a.Message < b.Message
	})
	out := ps[:0]
	for i, p := range ps {
		if i > 0 && p == ps[i-1] {
			continue
		}
		out = append(out, p)
	}
	return out
}

var (
	quotedRE = regexp.MustCompile(`'((?:[^'\\]|\\.)*)'`)
	typeRE   = regexp.MustCompile(`^expected (.+), but got (\w+)$`)
)

// patternMessages replaces the validator's "does not match pattern" with a
// human message, keyed by the end of the pattern's schema location.
var patternMessages = []struct{ suffix, msg string }{
	{"/$defs/timestamp/pattern", "must be a UTC timestamp with milliseconds, e.g. 2026-11-03T14:05:00.000Z"},
	{"/$defs/duration/pattern", "must be a duration such as 72h, 30m, 7d or 2w"},
	{"/$defs/targetText/pattern", "not a target: want background.SECTION.KEY, judgment.DOMAIN.SLOT, example.DOMAIN, awareness, recovery or manual.CAPABILITY.workflows"},
	{"/properties/id/pattern", "must be a record id: 26 characters of Crockford base32"},
	{"/properties/supersededBy/pattern", "must be a record id: 26 characters of Crockford base32"},
	{"/properties/actor/pattern", "must be kind:name with kind human, agent or system, e.g. human:ana"},
}

// unquoteNames extracts the names the validator quoted as 'name'.
func unquoteNames(msg string) []string {
	var names []string
	for _, m := range quotedRE.FindAllStringSubmatch(msg, -1) {
		s := strings.ReplaceAll(m[1], `\'`, `'`)
		s = strings.ReplaceAll(s, `"`, `\"`)
		if u, err := strconv.Unquote(`"` + s + `"`); err == nil {
			names = append(names, u)
		} else {
			names = append(names, m[1])
		}
	}
	sort.Strings(names)
	return names
}

// leafProblems maps one leaf validation error to problems at precise
// ranges.
func leafProblems(d *Document, e *jsonschema.ValidationError) []Problem {
	kw := e.KeywordLocation
	if i := strings.LastIndexByte(kw, '/'); i >= 0 {
		kw = kw[i+1:]
	}
	inst := e.InstanceLocation
	mk := func(ptr, msg string, r Range) Problem {
		return Problem{Rule: RuleSchema, Severity: SeverityError, Message: msg, Pointer: ptr, Range: r}
	}
	switch kw {
	case "required":
		_, r := d.Nearest(inst)
		var out []Problem
		for _, name := range unquoteNames(e.Message) {
			out = append(out, mk(JoinPointer(inst, name), fmt.Sprintf("missing required property %q", name), r))
		}
		return out
	case "additionalProperties":
		var out []Problem
		for _, name := range unquoteNames(e.Message) {
			ptr := JoinPointer(inst, name)
			r, ok := d.KeyRange(ptr)
			if !ok {
				_, r = d.Nearest(ptr)
			}
			out = append(out, mk(ptr, "unknown property "+quoteKey(name), r))
		}
		return out
	}
	if kw == "false" || (kw == "" && e.Message == "not allowed") || kw == "items" && e.Message == "not allowed" {
		if parent := ParentPointer(inst); d.IsArray(parent) {
			idx := lastToken(inst)
			return []Problem{mk(inst, fmt.Sprintf("unexpected item %s: at most %s allowed", idx, plural(atoi(idx), "item")), valueRange(d, inst))}
		}
		r, ok := d.KeyRange(inst)
		if !ok {
			_, r = d.Nearest(inst)
		}
		return []Problem{mk(inst, "unknown property "+quoteKey(lastToken(inst)), r)}
	}
	return []Problem{mk(inst, leafMessage(d, e, kw), valueRange(d, inst))}
}

func lastToken(ptr string) string {
	if ptr == "" {
		return ""
	}
	return UnescapePointer(ptr[strings.LastIndexByte(ptr, '/')+1:])
}

// valueRange is where a problem with a value is reported: the value itself,
// or its key when the value is a collection spanning several lines.
func valueRange(d *Document, ptr string) Range {
	n, ok := d.nodes[ptr]
	if !ok {
		_, r := d.Nearest(ptr)
		return r
	}
	if n.kind != kindScalar && n.val.Start.Line != n.val.End.Line {
		_, r := d.Nearest(ptr)
		return r
	}
	return n.val
}

func leafMessage(d *Document, e *jsonschema.ValidationError, kw string) string {
	msg := e.Message
	switch kw {
	case "type":
		if strings.HasSuffix(e.AbsoluteKeywordLocation, "/$defs/backgroundValue/type") {
			return "a background value must not be null: use a string, number, boolean, list or map"
		}
		if m := typeRE.FindStringSubmatch(msg); m != nil {
			if e.InstanceLocation == "" && m[2] == "null" {
				// An empty file, or one of comments only: "got null" says
				// nothing to someone who wrote no null.
				return "the document holds no value (the file is empty, comments only, or null): expected " + m[1]
			}
			want := strings.Split(m[1], " or ")
			if len(want) > 2 {
				m[1] = strings.Join(want[:len(want)-1], ", ") + " or " + want[len(want)-1]
			}
			return fmt.Sprintf("expected %s, got %s", m[1], m[2])
		}
	case "enum", "const":
		got := ""
		if v, ok := d.ValueAt(e.InstanceLocation); ok {
			if b, err := json.Marshal(v); err == nil && len(b) <= 80 {
				got = fmt.Sprintf(" (got %s)", b)
			}
		}
		return strings.TrimPrefix(msg, "value ") + got
	case "minLength":
		if strings.HasPrefix(msg, "length must be >= 1,") {
			return "must not be empty"
		}
		return msg
	case "pattern":
		for _, pm := range patternMessages {
			if strings.HasSuffix(e.AbsoluteKeywordLocation, pm.suffix) || strings.HasSuffix(e.KeywordLocation, pm.suffix) {
				return pm.msg
			}
		}
	case "minimum", "maximum":
		// must be >= 1 but found 0; must be <= 4.194304e+06 but found 5e+06
		var op, want, got string
		if _, err := fmt.Sscanf(msg, "must be %s %s but found %s", &op, &want, &got); err == nil {
			word := map[string]string{">=": "at least", "<=": "at most"}[op]
			if word != "" {
				return fmt.Sprintf("must be %s %s, got %s", word, plainNumber(want), plainNumber(got))
			}
		}
		return msg
	case "minItems":
		var want, got int
		if _, err := fmt.Sscanf(msg, "minimum %d items required, but found %d items", &want, &got); err == nil {
			return fmt.Sprintf("must have at least %s, got %d", plural(want, "item"), got)
		}
	case "items", "additionalItems", "maxItems":
		var want, got int
		if _, err := fmt.Sscanf(msg, "only %d items are allowed, but found %d items", &want, &got); err == nil {
			return fmt.Sprintf("must have at most %s, got %d", plural(want, "item"), got)
		}
	}
	return msg
}

// duplicateDomains reports judgment domains defined twice: memories target a
// judgment by its domain, so it must be unique.
func duplicateDomains(d *Document) []Problem {
	var out []Problem
	first := map[string]Range{}
	for _, jp := range d.Children("/roleTemplate/judgments") {
		ptr := jp + "/domain"
		v, ok := d.ValueAt(ptr)
		s, isStr := v.(string)
		if !ok || !isStr {
			continue
		}
		r, _ := d.ValueRange(ptr)
		if f, dup := first[s]; dup {
			out = append(out, Problem{Rule: RuleSchema, Severity: SeverityError, Pointer: ptr, Range: r,
				Message: fmt.Sprintf("duplicate judgment domain %q (first on line %d)", s, f.Start.Line+1)})
			continue
		}
		first[s] = r
	}
	return out
}

func plural(n int, word string) string { return Count(n, word) }

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// plainNumber writes a number the schema library printed in Go's %v of a
// float (4.194304e+06) as its digits (4194304).
func plainNumber(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
