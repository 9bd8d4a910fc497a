package schema

import (
	"fmt"
	"math/big"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// quickValid decides whether v is valid against a compiled schema without
// the validator's bookkeeping: jsonschema/v5 builds, for every object and
// array it visits, the sets of members and items left unevaluated, and an
// error value for every failed branch, about 1.5 MB for a large agent file
// that turns out valid. quickValid walks the compiled schema's exported
// keywords, allocating nothing on the common path; it decides exactly
// (ok true) for the keywords it knows and gives up (ok false) on a schema
// node using any other, or on a value the validator would not take.
// validateValue runs the validator itself unless quickValid says valid, so
// every problem still comes from the validator, worded and placed as
// before (TestQuickValidAgrees compares the two).
func quickValid(s *jsonschema.Schema, v any) (valid, ok bool) {
	return quickValidAt(s, v, 0)
}

// quickMaxDepth bounds quickValid's recursion: a schema whose references
// loop without descending into the value (which the validator refuses)
// gives up instead of overflowing the stack.
const quickMaxDepth = 512

func quickValidAt(s *jsonschema.Schema, v any, depth int) (valid, ok bool) {
	if depth > quickMaxDepth || !quickKnows(s) {
		return false, false
	}
	depth++
	quickValid := func(s *jsonschema.Schema, v any) (bool, bool) { return quickValidAt(s, v, depth) }
	if s.Always != nil {
		return *s.Always, true
	}
	if len(s.Types) > 0 {
		t, ok := quickType(v)
		if !ok {
			return false, false
		}
		matched := false
		for _, want := range s.Types {
			if want == t {
				matched = true
				break
			}
			if want == "integer" && t == "number" {
				n := quickRat(v)
				if n == nil {
					return false, false
				}
				if n.IsInt() {
					matched = true
					break
				}
			}
		}
		if !matched {
			return false, true
		}
	}
	valid = true
	// and folds one keyword's verdict into valid; ok false stops the walk.
	and := func(kv, kok bool) bool {
		if !kok {
			ok = false
			return false
		}
		valid = valid && kv
		return true
	}
	ok = true
	if len(s.Constant) > 0 {
		eq, eok := quickEquals(v, s.Constant[0])
		if !eok {
			return false, false
		}
		and(eq, true)
	}
	if len(s.Enum) > 0 {
		matched := false
		for _, item := range s.Enum {
			eq, eok := quickEquals(v, item)
			if !eok {
				return false, false
			}
			if eq {
				matched = true
				break
			}
		}
		and(matched, true)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, name := range s.Required {
			if _, has := x[name]; !has {
				valid = false
			}
		}
		for name, sub := range s.Properties {
			if pv, has := x[name]; has {
				if !and(quickValid(sub, pv)) {
					return false, false
				}
			}
		}
		if s.PropertyNames != nil {
			for name := range x {
				if !and(quickValid(s.PropertyNames, name)) {
					return false, false
				}
			}
		}
		switch ap := s.AdditionalProperties.(type) {
		case nil:
		case bool:
			if !ap {
				for name := range x {
					if _, known := s.Properties[name]; !known {
						valid = false
					}
				}
			}
		case *jsonschema.Schema:
			for name, pv := range x {
				if _, known := s.Properties[name]; !known {
					if !and(quickValid(ap, pv)) {
						return false, false
					}
				}
			}
		default:
			return false, false
		}
	case []any:
		if s.MinItems != -1 && len(x) < s.MinItems {
			valid = false
		}
		if s.MaxItems != -1 && len(x) > s.MaxItems {
			valid = false
		}
		for i, item := range x {
			var sub *jsonschema.Schema
			switch {
			case i < len(s.PrefixItems):
				sub = s.PrefixItems[i]
			case s.Items2020 != nil:
				sub = s.Items2020
			}
			if sub == nil {
				break
			}
			if !and(quickValid(sub, item)) {
				return false, false
			}
		}
	case string:
		if s.MinLength != -1 || s.MaxLength != -1 {
			n := utf8.RuneCountInString(x)
			if s.MinLength != -1 && n < s.MinLength || s.MaxLength != -1 && n > s.MaxLength {
				valid = false
			}
		}
		if s.Pattern != nil && !s.Pattern.MatchString(x) {
			valid = false
		}
	case float64:
		if s.Minimum != nil || s.Maximum != nil {
			n := quickRat(v)
			if n == nil {
				return false, false
			}
			if s.Minimum != nil && n.Cmp(s.Minimum) < 0 || s.Maximum != nil && n.Cmp(s.Maximum) > 0 {
				valid = false
			}
		}
	}
	if s.Ref != nil && !and(quickValid(s.Ref, v)) {
		return false, false
	}
	if s.Not != nil {
		nv, nok := quickValid(s.Not, v)
		if !and(!nv, nok) {
			return false, false
		}
	}
	for _, sub := range s.AllOf {
		if !and(quickValid(sub, v)) {
			return false, false
		}
	}
	if len(s.AnyOf) > 0 {
		matched := false
		for _, sub := range s.AnyOf {
			sv, sok := quickValid(sub, v)
			if !sok {
				return false, false
			}
			matched = matched || sv
		}
		and(matched, true)
	}
	if len(s.OneOf) > 0 {
		n := 0
		for _, sub := range s.OneOf {
			sv, sok := quickValid(sub, v)
			if !sok {
				return false, false
			}
			if sv {
				n++
			}
		}
		and(n == 1, true)
	}
	if s.If != nil {
		iv, iok := quickValid(s.If, v)
		if !iok {
			return false, false
		}
		branch := s.Else
		if iv {
			branch = s.Then
		}
		if branch != nil && !and(quickValid(branch, v)) {
			return false, false
		}
	}
	return valid, ok
}

// quickKnows reports whether quickValid decides every keyword s uses: none
// of those it does not evaluate is set (each at its unset value, as the
// compiler leaves it).
func quickKnows(s *jsonschema.Schema) bool {
	return s.Format == "" && s.RecursiveRef == nil && s.DynamicRef == nil &&
		s.MinProperties == -1 && s.MaxProperties == -1 && !s.RegexProperties && len(s.PatternProperties) == 0 &&
		len(s.Dependencies) == 0 && len(s.DependentRequired) == 0 && len(s.DependentSchemas) == 0 &&
		s.UnevaluatedProperties == nil && !s.UniqueItems && s.Items == nil && s.AdditionalItems == nil &&
		s.Contains == nil && s.UnevaluatedItems == nil && s.ContentEncoding == "" && s.ContentMediaType == "" &&
		s.ContentSchema == nil && s.ExclusiveMinimum == nil && s.ExclusiveMaximum == nil && s.MultipleOf == nil &&
		len(s.Extensions) == 0
}

// quickType is the validator's JSON type of a parsed value (ok false for a
// Go type the parsers do not produce).
func quickType(v any) (string, bool) {
	switch v.(type) {
	case nil:
		return "null", true
	case bool:
		return "boolean", true
	case float64:
		return "number", true
	case string:
		return "string", true
	case []any:
		return "array", true
	case map[string]any:
		return "object", true
	}
	return "", false
}

// quickRat is a number as the validator reads it (nil when it cannot: not
// finite).
func quickRat(v any) *big.Rat {
	n, ok := new(big.Rat).SetString(fmt.Sprint(v))
	if !ok {
		return nil
	}
	return n
}

// quickEquals is the validator's equality for a const or enum item that is
// a string, a boolean or null (ok false for the others).
func quickEquals(v, item any) (eq, ok bool) {
	vt, vok := quickType(v)
	it, iok := quickType(item)
	if !vok || !iok {
		return false, false
	}
	if vt != it {
		return false, true
	}
	switch vt {
	case "string":
		return v.(string) == item.(string), true
	case "boolean":
		return v.(bool) == item.(bool), true
	case "null":
		return true, true
	}
	return false, false
}
