package schema

import (
	"encoding/json"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
	"pgregory.net/rapid"
)

// genValue draws a random JSON value of bounded depth.
func genValue(depth int, runes []rune) *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		kinds := 4
		if depth > 0 {
			kinds = 6
		}
		switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
		case 0:
			return rapid.StringOf(rapid.RuneFrom(runes)).Draw(t, "str")
		case 1:
			return float64(rapid.IntRange(-1000, 1000).Draw(t, "int"))
		case 2:
			return rapid.Bool().Draw(t, "bool")
		case 3:
			return nil
		case 4:
			n := rapid.IntRange(0, 4).Draw(t, "len")
			arr := make([]any, n)
			for i := range arr {
				arr[i] = genValue(depth-1, runes).Draw(t, "item")
			}
			return arr
		default:
			keys := rapid.SliceOfDistinct(rapid.StringMatching(`[a-z~/ é]{1,6}`), func(s string) string { return s }).Draw(t, "keys")
			m := map[string]any{}
			for _, k := range keys {
				m[k] = genValue(depth-1, runes).Draw(t, "val")
			}
			return m
		}
	})
}

// TestParsePreservesValues: any JSON value, written as JSON or as YAML,
// parses back to itself, and in JSON every node's value range holds exactly
// that node's text.
func TestParsePreservesValues(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		v := genValue(3, []rune("ab é🚀\"\\:#-\n\t'{}[],&*!|>")).Draw(t, "value")
		indent := rapid.SampledFrom([]string{"", " ", "\t"}).Draw(t, "indent")
		js, err := json.MarshalIndent(v, "", indent)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseDocument("v.json", js)
		if err != nil {
			t.Fatalf("parse JSON %s: %v", js, err)
		}
		if !reflect.DeepEqual(d.Value(), v) {
			t.Fatalf("JSON %s parsed to %#v", js, d.Value())
		}
		for ptr, n := range d.nodes {
			var got any
			if err := json.Unmarshal([]byte(text(d, n.val)), &got); err != nil || !reflect.DeepEqual(got, n.value) {
				t.Fatalf("%s: value range text %q does not hold %#v", ptr, text(d, n.val), n.value)
			}
		}
		// yaml.v3 does not read back all of its own output for strings with
		// tabs and line breaks, so the YAML half draws its own value.
		v = genValue(3, []rune("ab é🚀\"\\:#-'{}[],&*!|>")).Draw(t, "yamlValue")
		ys, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		yd, err := ParseDocument("v.yaml", ys)
		if err != nil {
			t.Fatalf("parse YAML %q: %v", ys, err)
		}
		want := v
		if m, ok := v.(map[string]any); ok && len(m) == 0 {
			want = map[string]any{}
		}
		if !reflect.DeepEqual(yd.Value(), want) {
			t.Fatalf("YAML %q parsed to %#v, want %#v", ys, yd.Value(), want)
		}
		for ptr, n := range yd.nodes {
			if n.kind != kindScalar || n.aliased {
				continue
			}
			// A scalar's range re-parses to the scalar (block scalars need
			// their indentation context, so compare those by containment).
			src := text(yd, n.val)
			var got any
			if err := yaml.Unmarshal([]byte(src), &got); err == nil && src != "" && src[0] != '|' && src[0] != '>' {
				if f, ok := got.(int); ok {
					got = float64(f)
				}
				if !reflect.DeepEqual(got, n.value) {
					t.Fatalf("%s: YAML value range %q re-parses to %#v, want %#v (doc %q)", ptr, src, got, n.value, ys)
				}
			}
		}
	})
}
