package schema

import (
	"fmt"
	"math"
	"reflect"
	"strings"
)

// decodeNode decodes the node tree under n into v (a settable value) with
// encoding/json's rules for the types of the agent config: fields by their
// json tag (exact match first, then case-insensitive), unknown fields an
// error, null leaving the value at its zero, Entries in document order.
// Generic values (any) are deep copies, so the config never shares maps or
// slices with the Document.
func decodeNode(n *node, v reflect.Value) error {
	if n.kind == kindScalar && n.value == nil {
		switch v.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			v.SetZero()
		}
		return nil
	}
	if v.Type() == entriesType {
		return decodeEntries(n, v)
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := decodeNode(n, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Interface:
		if v.NumMethod() != 0 {
			return decodeTypeError(n, v)
		}
		c := copyValue(n.value)
		if c == nil {
			v.SetZero()
			return nil
		}
		v.Set(reflect.ValueOf(c))
		return nil
	case reflect.Struct:
		return decodeStruct(n, v)
	case reflect.Slice:
		if n.kind != kindArray {
			return decodeTypeError(n, v)
		}
		s := reflect.MakeSlice(v.Type(), len(n.children), len(n.children))
		for i, c := range n.children {
			if err := decodeNode(c, s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Array:
		if n.kind != kindArray {
			return decodeTypeError(n, v)
		}
		v.SetZero()
		for i, c := range n.children {
			if i >= v.Len() {
				break // encoding/json drops extra items
			}
			if err := decodeNode(c, v.Index(i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if n.kind != kindObject || v.Type().Key().Kind() != reflect.String {
			return decodeTypeError(n, v)
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.children))
		for _, c := range n.children {
			e := reflect.New(v.Type().Elem()).Elem()
			if err := decodeNode(c, e); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(n.childKey(c)).Convert(v.Type().Key()), e)
		}
		v.Set(m)
		return nil
	case reflect.String:
		s, ok := n.value.(string)
		if !ok {
			return decodeTypeError(n, v)
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		b, ok := n.value.(bool)
		if !ok {
			return decodeTypeError(n, v)
		}
		v.SetBool(b)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f, ok := n.value.(float64)
		if !ok || f != math.Trunc(f) || v.OverflowInt(int64(f)) || math.Abs(f) > 1<<62 {
			return decodeTypeError(n, v)
		}
		v.SetInt(int64(f))
		return nil
	case reflect.Float32, reflect.Float64:
		f, ok := n.value.(float64)
		if !ok {
			return decodeTypeError(n, v)
		}
		v.SetFloat(f)
		return nil
	}
	return decodeTypeError(n, v)
}

var entriesType = reflect.TypeFor[Entries]()

// decodeEntries decodes an object into Entries in document order.
func decodeEntries(n *node, v reflect.Value) error {
	if n.kind != kindObject {
		return fmt.Errorf("%s: background section: want an object", pointerText(n.ptr))
	}
	out := make(Entries, 0, len(n.children))
	for _, c := range n.children {
		out = append(out, Entry{Key: n.childKey(c), Value: copyValue(c.value)})
	}
	v.Set(reflect.ValueOf(out))
	return nil
}

// decodeStruct decodes an object into a struct by the fields' json tags.
func decodeStruct(n *node, v reflect.Value) error {
	if n.kind != kindObject {
		return decodeTypeError(n, v)
	}
	t := v.Type()
	for _, c := range n.children {
		key := n.childKey(c)
		fi := fieldByJSONName(t, key)
		if fi < 0 {
			return fmt.Errorf("%s: unknown field %q", pointerText(n.ptr), key)
		}
		if err := decodeNode(c, v.Field(fi)); err != nil {
			return err
		}
	}
	return nil
}

// fieldByJSONName is the index of t's exported field named name by its json
// tag (or Go name), an exact match preferred over a case-insensitive one; -1
// when there is none.
func fieldByJSONName(t reflect.Type, name string) int {
	fold := -1
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		fname, _, _ := strings.Cut(tag, ",")
		if fname == "" {
			fname = f.Name
		}
		if fname == name {
			return i
		}
		if fold < 0 && strings.EqualFold(fname, name) {
			fold = i
		}
	}
	return fold
}

func decodeTypeError(n *node, v reflect.Value) error {
	got := "null"
	switch n.value.(type) {
	case string:
		got = "string"
	case bool:
		got = "boolean"
	case float64:
		got = "number"
	case []any:
		got = "array"
	case map[string]any:
		got = "object"
	}
	return fmt.Errorf("%s: cannot decode %s into %s", pointerText(n.ptr), got, v.Type())
}

func pointerText(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

// childKey is the (unescaped) member name of child c of object n.
func (n *node) childKey(c *node) string {
	return UnescapePointer(n.childToken(c))
}

// copyValue deep-copies a generic JSON value.
func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = copyValue(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = copyValue(e)
		}
		return s
	}
	return v
}
