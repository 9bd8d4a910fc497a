package schema

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// YAMLScalar is s written as a YAML scalar for a block sequence item
// ("- " + YAMLScalar(s)) or a block mapping key or value: plain when it has
// no indicator characters and YAML reads the plain text back as the string
// s in both places, else double-quoted (Go's escapes are YAML's). Text that
// plain YAML would misread — a nested item ("- x"), a complex key ("? x"),
// a number, null, a boolean (YAML 1.1's yes/no/on/off too) — is quoted.
// Every surface that writes a string into YAML uses it.
func YAMLScalar(s string) string {
	if plainYAML(s) {
		return s
	}
	return strconv.Quote(s)
}

// plainYAML reports whether s reads back as itself, a plain string, as a
// sequence item and as a mapping value.
func plainYAML(s string) (ok bool) {
	// Indicators and separators are quoted without asking the parser
	// (plain "14:00 ET" is a string, but quoted it reads the same anywhere).
	if s == "" || strings.TrimSpace(s) != s || strings.ContainsAny(s, ":#'\"\n\r\t{}[],&*!|>%@`") {
		return false
	}
	switch strings.ToLower(s) {
	case "yes", "no", "on", "off", "y", "n": // booleans to YAML 1.1 readers
		return false
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return false
	}
	if _, err := strconv.ParseInt(s, 0, 64); err == nil {
		return false
	}
	defer func() {
		if recover() != nil { // gopkg.in/yaml.v3 panics on some inputs
			ok = false
		}
	}()
	for _, doc := range []string{"- " + s, "k: " + s} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &n); err != nil || len(n.Content) != 1 {
			return false
		}
		c := n.Content[0].Content
		if len(c) == 0 {
			return false
		}
		leaf := c[len(c)-1]
		if len(c) > 2 || leaf.Kind != yaml.ScalarNode || leaf.Style != 0 || leaf.ShortTag() != "!!str" || leaf.Value != s {
			return false
		}
	}
	return true
}
