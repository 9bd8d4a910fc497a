package schema

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// RuleParse is the rule id of malformed-input problems.
const RuleParse = "parse"

// FileKind says how Check reads a file.
type FileKind int

// The kinds of file Check understands.
const (
	FileAgent     FileKind = iota // *.agent.yaml|yml|json, or any YAML/JSON agent
	FileWorkspace                 // .agent-ls.yaml
	FileRecords                   // *.jsonl: one memory record per line
)

// KindOf classifies a file by name: the workspace config, a JSONL record file,
// or (anything else) an agent file.
func KindOf(name string) FileKind {
	base := filepath.Base(name)
	switch {
	case base == WorkspaceConfigName:
		return FileWorkspace
	case strings.HasSuffix(strings.ToLower(base), ".jsonl"):
		return FileRecords
	}
	return FileAgent
}

// Check parses and validates one file by its kind and returns every problem,
// a malformed file as one problem with rule "parse". It is what `agent-ls
// validate` reports.
func Check(filename string, data []byte) []Problem {
	switch KindOf(filename) {
	case FileWorkspace:
		_, ps, err := ParseWorkspaceConfig(filename, data)
		if err != nil {
			return []Problem{parseProblem(err)}
		}
		return ps
	case FileRecords:
		return checkRecords(filename, data)
	}
	_, _, ps, err := LoadAgent(filename, data)
	if err != nil {
		return append(ps, parseProblem(err))
	}
	return ps
}

// parseProblem turns a parse (or decode) error into a Problem.
func parseProblem(err error) Problem {
	var pe *ParseError
	if errors.As(err, &pe) {
		return Problem{Rule: RuleParse, Severity: SeverityError, Message: pe.Msg, Range: pe.Range()}
	}
	return Problem{Rule: RuleParse, Severity: SeverityError, Message: err.Error()}
}

// checkRecords validates a JSONL file of memory records line by line; blank
// lines are skipped.
func checkRecords(filename string, data []byte) []Problem {
	if ps := TooLarge(filename, int64(len(data))); ps != nil {
		return ps
	}
	var out []Problem
	off := 0
	for line := 0; off <= len(data); line++ {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data) - off
		}
		text := bytes.TrimRight(data[off:off+end], "\r")
		if len(bytes.TrimSpace(text)) > 0 {
			var ps []Problem
			d, err := ParseDocument(filename+".json", text)
			if err != nil {
				ps = []Problem{parseProblem(err)}
			} else {
				ps = ValidateRecord(d)
			}
			for _, p := range ps {
				p.Range = shiftRange(p.Range, line, off)
				out = append(out, p)
			}
		}
		off += end + 1
	}
	return out
}

func shiftRange(r Range, line, off int) Range {
	shift := func(p Position) Position {
		return Position{Line: p.Line + line, Character: p.Character, Offset: p.Offset + off}
	}
	return Range{Start: shift(r.Start), End: shift(r.End)}
}

// maxRecordFileSize is the largest JSONL record file Check accepts.
const maxRecordFileSize = MaxDocumentSize * 8

// SizeLimit is the largest file Check accepts under filename, in bytes:
// 64 MiB for a JSONL record file, MaxDocumentSize for anything else.
func SizeLimit(filename string) int64 {
	if KindOf(filename) == FileRecords {
		return maxRecordFileSize
	}
	return MaxDocumentSize
}

// TooLarge is the problem Check reports for a file of size bytes over
// SizeLimit(filename), and nil within it. A caller that knows the size (a
// stat, or a read of at most the limit plus one byte) can refuse a huge file
// with the real size without reading it whole.
func TooLarge(filename string, size int64) []Problem {
	if size <= SizeLimit(filename) {
		return nil
	}
	if KindOf(filename) == FileRecords {
		return []Problem{{Rule: RuleParse, Severity: SeverityError, Message: fmt.Sprintf("record file over the %d MiB limit", maxRecordFileSize>>20)}}
	}
	return []Problem{parseProblem(sizeError(filename, size))}
}

// sizeError is the error for an agent or config file over MaxDocumentSize.
func sizeError(filename string, size int64) *ParseError {
	return &ParseError{File: filename, Line: 1, Col: 1,
		Msg: fmt.Sprintf("file is %.1f MiB, over the %d MiB limit", float64(size)/(1<<20), MaxDocumentSize>>20)}
}
