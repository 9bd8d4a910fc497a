package schema

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// TestYAMLScalar: whatever the string, "- " + YAMLScalar(s) and
// "k: " + YAMLScalar(s) read back as the string s; plain words stay plain.
func TestYAMLScalar(t *testing.T) {
	t.Parallel()
	plain := []string{"Deploy one service at a time", "deploy-ops", "rollback?", "ünï 😀", "x-y_z.1"}
	for _, s := range plain {
		if got := YAMLScalar(s); got != s {
			t.Errorf("YAMLScalar(%q) = %s, want it plain", s, got)
		}
	}
	for _, s := range append(plain, "- always run tests", "? x", "a:b", "it's fine", "14:00 ET", "a: b", "42", "0x1F", "1e3", "null", "~", "true", "yes", "Off",
		"", " lead", "trail ", "#x", "x #y", "*alias", "&anchor x", "!tag x", "|", ">", "[a, b]", "{a: b}", "@x", "`x", "%x",
		"'q", "\"q", "two\nlines", "tab\there", "ünï 😀", "---", "...", "- ", ":", "a:", "2001-12-14") {
		for _, doc := range []string{"- " + YAMLScalar(s), "k: " + YAMLScalar(s)} {
			var v any
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				t.Errorf("%q written as %s: %v", s, doc, err)
				continue
			}
			var got any
			switch v := v.(type) {
			case []any:
				got = v[0]
			case map[string]any:
				got = v["k"]
			}
			if got != s {
				t.Errorf("%q written as %s reads back as %#v", s, doc, got)
			}
		}
	}
}
