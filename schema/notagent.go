package schema

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/agent-ls/agent-ls/textkernel"
)

// MaxQuotedKey bounds a key quoted in a problem's message ("unknown
// property", "duplicate key"): a message names the offending key, cut to
// this many characters, and never its value or its line.
const MaxQuotedKey = 64

// quoteKey is key as a message quotes it: bounded (textkernel.Truncate)
// and %q-escaped.
func quoteKey(key string) string { return fmt.Sprintf("%q", textkernel.Truncate(key, MaxQuotedKey)) }

// notAgentFile is the one problem of a document that is clearly not an
// agent file: a top level that is not an object (a list, a string, a
// number; an empty file is still an agent file being written), or an
// object none of whose keys is an agent key or near one (a typo of
// "mission" is an agent file with a typo). Such a file gets this problem
// only: none of its keys or values is quoted, so a file that is not an
// agent file (a credentials file, /etc/shadow behind a symbolic link) is
// never echoed back through the schema's messages.
func notAgentFile(d *Document) (Problem, bool) {
	v := d.Value()
	what := ""
	switch t := v.(type) {
	case nil:
		return Problem{}, false
	case map[string]any:
		if len(t) == 0 {
			return Problem{}, false
		}
		// The required keys answer for nearly every agent file without
		// reading the schema's property list.
		for _, k := range requiredAgentKeys {
			if _, ok := t[k]; ok {
				return Problem{}, false
			}
		}
		names := agentKeys()
		for k := range t {
			if isAgentKey(names, k) {
				return Problem{}, false
			}
		}
		for k := range t {
			if _, near := NearestName(k, names); near {
				return Problem{}, false
			}
		}
		what = fmt.Sprintf("none of its top-level keys is an agent key (%s)", strings.Join(agentKeys(), ", "))
	case []any:
		what = "its top level is a list, not an object with roleTemplate and mission"
	default:
		what = "its top level is " + scalarType(v) + ", not an object with roleTemplate and mission"
	}
	return Problem{Rule: RuleSchema, Severity: SeverityError, Range: d.rootRange(), Message: "not an agent file: " + what}, true
}

// requiredAgentKeys are the agent schema's required top-level properties
// (TestRequiredAgentKeys checks them against the schema).
var requiredAgentKeys = [...]string{"roleTemplate", "mission"}

// agentKeys are the agent schema's top-level properties, sorted (read from
// the embedded schema once).
var agentKeys = sync.OnceValue(func() []string {
	var out []string
	for _, p := range SchemaDocFor(FileAgent).Properties("") {
		if !strings.HasPrefix(p.Name, "$") {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
})

func isAgentKey(ss []string, s string) bool {
	if s == "$schema" {
		return true
	}
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// scalarType names a parsed scalar's JSON type.
func scalarType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}
