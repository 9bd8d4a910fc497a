package schema

import (
	"bytes"
	"reflect"
	"unsafe"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The embedded schemas are constants of this package, valid against the
// draft 2020-12 metaschema (TestEmbeddedSchemasValid checks them the
// validator's way). jsonschema/v5 validates a schema against its draft's
// metaschema on every compile, with no option to skip it: for the agent
// schema that was about half of the compile, which a cold `agent-ls
// render` pays once. compileTrusted compiles without that check, to the
// same validator (TestTrustedCompileSameErrors compares the two on the
// repository's documents and mutations of them).
//
// The library checks a schema against Draft.meta of its draft: the draft
// its "$schema" names, else Compiler.Draft. compileTrusted drops the root
// "$schema" keyword from the source and compiles with a copy of Draft2020
// whose meta is nil (the library's own bootstrap state). A schema whose
// root names no metaschema treats every vocabulary as on; of the keywords
// the 2020-12 vocabularies gate, only "format" then behaves differently
// (asserted instead of annotated), so a source using it is compiled the
// checked way.

// rootSchemaKeyword is the "$schema" member of the embedded schemas' root,
// as written (first in the file).
var rootSchemaKeyword = []byte(`"$schema": "https://json-schema.org/draft/2020-12/schema",`)

// trustedDraft is Draft2020 without its metaschema, or nil when this
// version of the library does not hold it where compileTrusted expects
// (then schemas compile the checked way).
func trustedDraft() *jsonschema.Draft {
	d := *jsonschema.Draft2020
	f := reflect.ValueOf(&d).Elem().FieldByName("meta")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*jsonschema.Schema]() || f.IsNil() {
		return nil
	}
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().SetZero()
	return &d
}

// trustedSource is src without its root "$schema" keyword, or nil when src
// is not in the form compileTrusted handles.
func trustedSource(src []byte) []byte {
	if bytes.Contains(src, []byte(`"format"`)) {
		return nil
	}
	i := bytes.Index(src, rootSchemaKeyword)
	if i < 0 || string(bytes.TrimSpace(src[:i])) != "{" {
		return nil // not the root object's first member
	}
	out := make([]byte, 0, len(src)-len(rootSchemaKeyword))
	out = append(out, src[:i]...)
	return append(out, src[i+len(rootSchemaKeyword):]...)
}

// compileTrusted compiles an embedded schema without checking it against
// the metaschema; ok is false when it cannot (compile it checked).
func compileTrusted(id string, src []byte) (compiled, bool) {
	trusted := trustedSource(src)
	draft := trustedDraft()
	if trusted == nil || draft == nil {
		return compiled{}, false
	}
	c := compileWith(id, trusted, draft)
	return c, c.err == nil
}
