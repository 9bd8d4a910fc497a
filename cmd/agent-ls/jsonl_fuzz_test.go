package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/store"
)

const jsonlGood = `{"id":"01JB0000000000000000000001","scope":{},"kind":"fact","content":"fine","provenance":{},"createdAt":"2026-10-01T10:00:00.000Z","updatedAt":"2026-10-01T10:00:00.000Z"}`

// jsonlErrRE is the "FILE:LINE:" every readJSONL error starts with (after
// "read " for an I/O error).
var jsonlErrRE = regexp.MustCompile(`^(?:read )?in\.jsonl:(\d+):`)

// FuzzReadJSONL feeds `memory import`'s JSONL reader arbitrary bytes.
// Properties: no panic; either records or an error, never both
// (all-or-nothing); an error names in.jsonl:LINE with LINE a line of the
// input that is not blank, and every line before it reads without error
// (the error is the first bad line); on success every non-blank line gave
// one record, in order, with its line number, each record passes
// store.ValidateRecord, and the records written back as JSONL read back
// equal.
func FuzzReadJSONL(f *testing.F) {
	good2 := strings.Replace(jsonlGood, "01\"", "02\"", 1)
	for _, s := range []string{
		"", "\n\n", jsonlGood, jsonlGood + "\n" + good2 + "\n",
		jsonlGood + "\r\n\r\n" + good2,
		jsonlGood + "\n" + jsonlGood,                        // duplicate id
		jsonlGood + " {}",                                   // two values
		`{"id": "x",, }`,                                    // syntax error
		strings.Replace(jsonlGood, `"fine"`, `"  "`, 1),     // empty content
		strings.Replace(jsonlGood, `"fact"`, `"rumour"`, 1), // bad kind
		strings.Replace(jsonlGood, `"scope":{}`, `"scope":{},"colour":"red"`, 1), // unknown field
		strings.Replace(jsonlGood, "2026-10-01T10:00:00.000Z", "yesterday", 1),   // bad time
		strings.Replace(jsonlGood, `"provenance":{}`, `"provenance":{},"target":"judgment.refunds.heuristics"`, 1),
		strings.Replace(jsonlGood, `"provenance":{}`, `"provenance":{},"target":"judgment.refunds"`, 1),
		"null", "[]", "\xff\xfe", "{\"id\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, lines, err := readJSONL("in.jsonl", bytes.NewReader(data))
		text := strings.Split(string(data), "\n")
		blank := func(l int) bool { // l is 1-based
			return len(bytes.TrimSpace([]byte(strings.TrimSuffix(text[l-1], "\r")))) == 0
		}
		if err != nil {
			if recs != nil || lines != nil {
				t.Fatalf("error %v with %d records: not all-or-nothing", err, len(recs))
			}
			m := jsonlErrRE.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("error %q does not name in.jsonl:LINE", err)
			}
			if !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("error %q on in-memory input is not ErrInvalid", err)
			}
			l, _ := strconv.Atoi(m[1])
			if l < 1 || l > len(text) || blank(l) {
				t.Fatalf("error %q names line %d of %d, which is blank or missing", err, l, len(text))
			}
			prefix := strings.Join(text[:l-1], "\n")
			if _, _, perr := readJSONL("in.jsonl", strings.NewReader(prefix)); perr != nil {
				t.Fatalf("error %q at line %d, but the lines before it fail too: %v", err, l, perr)
			}
			return
		}
		if len(recs) != len(lines) {
			t.Fatalf("%d records, %d line numbers", len(recs), len(lines))
		}
		var want []int
		for l := 1; l <= len(text); l++ {
			if !blank(l) {
				want = append(want, l)
			}
		}
		if !slices.Equal(lines, want) {
			t.Fatalf("records from lines %v, non-blank lines are %v", lines, want)
		}
		var out bytes.Buffer
		for i, r := range recs {
			if verr := store.ValidateRecord(r); verr != nil {
				t.Fatalf("record of line %d does not validate: %v", lines[i], verr)
			}
			b, merr := json.Marshal(r)
			if merr != nil {
				t.Fatalf("record of line %d: %v", lines[i], merr)
			}
			out.Write(b)
			out.WriteByte('\n')
		}
		again, _, err := readJSONL("in.jsonl", &out)
		if err != nil {
			t.Fatalf("records written back do not read: %v\n%s", err, out.Bytes())
		}
		if len(recs) > 0 && !reflect.DeepEqual(again, recs) {
			t.Fatalf("records written back read differently:\n%+v\n%+v", recs, again)
		}
	})
}

// TestReadJSONLLongLine: a line over the 8 MiB limit is an invalid-input
// error naming its line (not a bare "token too long" read error), and
// nothing is returned.
func TestReadJSONLLongLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		body string
		want string
	}{
		{"first line", strings.Repeat("x", maxImportLine+1), "in.jsonl:1: invalid request: line longer than the 8 MiB limit"},
		{"third line", jsonlGood + "\n\n" + `{"content":"` + strings.Repeat("y", maxImportLine) + `"}`, "in.jsonl:3: invalid request: line longer than the 8 MiB limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			recs, lines, err := readJSONL("in.jsonl", strings.NewReader(tc.body))
			if err == nil || err.Error() != tc.want || !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("err = %v, want %q (ErrInvalid)", err, tc.want)
			}
			if recs != nil || lines != nil {
				t.Fatalf("%d records returned with the error", len(recs))
			}
		})
	}
}
