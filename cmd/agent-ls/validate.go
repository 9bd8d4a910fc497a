package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
)

const validateUsage = `Checks agent files (*.agent.yaml, *.agent.yml, *.agent.json) against the agent
JSON Schema, workspace configs (.agent-ls.yaml) against theirs, and JSONL files
(*.jsonl) line by line against the memory-record schema. A directory is
searched recursively for agent files and workspace configs (skipping .git,
node_modules and .agent-memory).

Each problem prints as
  file:line:col: severity: message [rule]
with 1-based lines and columns. --format json prints an array of
{file, line, column, endLine, endColumn, severity, message, rule, pointer}.

Exit status: 0 no problems, 1 problems found, 2 usage or I/O error.`

// finding is one problem of one file, as validate prints it in JSON.
type finding struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"endLine"`
	EndColumn int    `json:"endColumn"`
	Severity  string `json:"severity"`
	Message   string `json:"message"`
	Rule      string `json:"rule"`
	Pointer   string `json:"pointer"`
}

// runValidate checks agent files, workspace configs and record files
// against their JSON Schemas.
func runValidate(ctx context.Context, e *env, args []string) int {
	fset := flag.NewFlagSet("validate", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	format := fset.String("format", "text", "output `format`: text or json")
	paths, err := parseArgs(fset, args)
	if errors.Is(err, errHelp) {
		printHelp(e.stdout, help{path: "validate", usage: "[--format text|json] FILE|DIR...", body: validateUsage}, fset)
		return exitOK
	}
	if err != nil {
		return usageFail(e.stderr, "validate", err)
	}
	if *format != "text" && *format != "json" {
		return usageFail(e.stderr, "validate", fmt.Errorf("--format %q: want text or json", *format))
	}
	if len(paths) == 0 {
		return usageFail(e.stderr, "validate", errors.New("no files given"))
	}
	code := exitOK
	findings := []finding{}
	for _, arg := range paths {
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(e.stderr, "agent-ls validate: %v\n", err)
			return exitUsage
		}
		files, err := expandArg(e.cwd, arg)
		if err != nil {
			fmt.Fprintf(e.stderr, "agent-ls validate: %v\n", err)
			code = exitUsage
			continue
		}
		for _, f := range files {
			problems, err := outsideProblem(resolve(e.cwd, f), f)
			if err != nil {
				fmt.Fprintf(e.stderr, "agent-ls validate: %v\n", pathError(err, f))
				code = exitUsage
				continue
			}
			var data []byte
			if problems == nil {
				var size int64
				data, size, err = readChecked(resolve(e.cwd, f), f)
				if err != nil {
					fmt.Fprintf(e.stderr, "agent-ls validate: %v\n", pathError(err, f))
					code = exitUsage
					continue
				}
				problems = schema.TooLarge(f, size)
				if problems == nil {
					problems = schema.Check(f, data)
				}
			}
			var doc *schema.Document // parsed again only for a "did you mean"
			for _, p := range problems {
				r := p.Range
				msg := p.Message
				if isUnknownKey(msg) {
					if doc == nil {
						doc, _ = schema.ParseDocument(f, data)
					}
					msg += keyHint(doc, f, p.Pointer)
				}
				findings = append(findings, finding{
					File: f, Line: r.Start.Line + 1, Column: r.Start.Character + 1,
					EndLine: r.End.Line + 1, EndColumn: r.End.Character + 1,
					Severity: p.Severity, Message: msg, Rule: p.Rule, Pointer: p.Pointer,
				})
			}
		}
	}
	if *format == "json" {
		out, err := json.MarshalIndent(findings, "", "  ")
		if err != nil {
			fmt.Fprintf(e.stderr, "agent-ls validate: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(e.stdout, "%s\n", out)
	} else {
		for _, f := range findings {
			fmt.Fprintf(e.stdout, "%s:%d:%d: %s: %s [%s]\n", f.File, f.Line, f.Column, f.Severity, f.Message, f.Rule)
		}
	}
	if code == exitOK && len(findings) > 0 {
		code = exitFindings
	}
	return code
}

func resolve(cwd, p string) string {
	if filepath.IsAbs(p) || cwd == "" {
		return p
	}
	return filepath.Join(cwd, p)
}

// pathError drops the absolute path os errors carry, naming the file as
// the user gave it.
func pathError(err error, name string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s: %w", pe.Op, name, pe.Err)
	}
	return err
}

// expandArg turns an argument into the files to check: the file itself, or
// for a directory every agent file and workspace config below it, sorted.
func expandArg(cwd, arg string) ([]string, error) {
	fi, err := os.Stat(resolve(cwd, arg))
	if err != nil {
		return nil, pathError(err, arg)
	}
	if !fi.IsDir() {
		if !schema.IsAgentFile(arg) && filepath.Base(arg) != schema.WorkspaceConfigName && schema.KindOf(arg) != schema.FileRecords {
			return nil, fmt.Errorf("%s: not an agent file (want *.agent.yaml, *.agent.yml or *.agent.json; also %s and *.jsonl records)", arg, schema.WorkspaceConfigName)
		}
		return []string{arg}, nil
	}
	var files []string
	root := resolve(cwd, arg)
	err = filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() {
			switch de.Name() {
			case ".git", "node_modules", ".agent-memory":
				if p != root {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if schema.IsAgentFile(de.Name()) || de.Name() == schema.WorkspaceConfigName {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.Join(arg, rel))
		}
		return nil
	})
	if err != nil {
		return nil, pathError(err, arg)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no agent files found", arg)
	}
	sort.Strings(files)
	return files, nil
}

// isUnknownKey reports whether a schema message is about an unknown key.
func isUnknownKey(msg string) bool { return strings.HasPrefix(msg, `unknown property "`) }

// keyHint is ` (did you mean "KEY"?)` for the unknown key at ptr of doc
// (schema.SuggestKey, the language server's quick fix), or "".
func keyHint(doc *schema.Document, file, ptr string) string {
	if doc == nil {
		return ""
	}
	if best, ok := schema.SuggestKey(doc, schema.KindOf(file), ptr); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}
