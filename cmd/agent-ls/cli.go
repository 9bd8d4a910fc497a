package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agent-ls/agent-ls/schema"
)

// The command framework every subcommand shares: one flag parser (flags
// before and after positional arguments, "--" ends them), one wording for
// usage errors, and one help layout (usage line, description, example,
// flags in the --flag style the usage lines use). The command tree itself is
// the table in commands() and memorySubs().

// errHelp is returned by parseArgs for -h/--help.
var errHelp = flag.ErrHelp

// parseArgs parses fs's flags anywhere in args and returns the positional
// arguments in order. Parse errors come back in the one usage wording
// (usageError); -h or --help returns errHelp.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, usageError(fs, err)
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// usageError rewords the flag package's errors of fs in the --flag style:
// "unknown flag --x (did you mean "--y"?)", "flag --x needs a value",
// "flag --x: invalid value ...".
func usageError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "flag provided but not defined: "):
		name := strings.TrimLeft(strings.TrimPrefix(msg, "flag provided but not defined: "), "-")
		return fmt.Errorf("unknown flag --%s%s", name, flagHint(fs, name))
	case strings.HasPrefix(msg, "flag needs an argument: "):
		name := strings.TrimLeft(strings.TrimPrefix(msg, "flag needs an argument: "), "-")
		return fmt.Errorf("flag --%s needs a value", name)
	case strings.HasPrefix(msg, "invalid value ") || strings.HasPrefix(msg, "invalid boolean value "):
		// invalid value "x" for flag -n: parse error
		// invalid boolean value "x" for -n: parse error
		sep := " for flag -"
		if strings.HasPrefix(msg, "invalid boolean value ") {
			sep = " for -"
		}
		if i := strings.Index(msg, sep); i >= 0 {
			rest := msg[i+len(sep):]
			name, why, _ := strings.Cut(rest, ": ")
			name = strings.TrimLeft(name, "-")
			what := "invalid value " + strings.TrimPrefix(strings.TrimPrefix(msg[:i], "invalid value "), "invalid boolean value ")
			return fmt.Errorf("flag --%s: %s: %s", name, what, flagWant(fs, name, why))
		}
	case strings.HasPrefix(msg, "bad flag syntax: "):
		return fmt.Errorf("bad flag syntax %s", strings.TrimPrefix(msg, "bad flag syntax: "))
	}
	return err
}

// flagWant turns the flag package's bare "parse error" (or "value out of
// range") for flag name into what the flag wants; other reasons, a flag's
// own, are kept.
func flagWant(fs *flag.FlagSet, name, why string) string {
	if why != "parse error" && why != "value out of range" {
		return why
	}
	f := fs.Lookup(name)
	if f == nil {
		return why
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "want true or false"
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return why
	}
	switch g.Get().(type) {
	case time.Duration:
		return "want a duration such as 30s, 10m or 1h30m"
	case int, int64, uint, uint64:
		if why == "value out of range" {
			return "want an integer in range"
		}
		return "want an integer"
	case float64:
		return "want a number"
	}
	return why
}

// flagHint is ` (did you mean "--y"?)` for the flag of fs nearest to the
// unknown flag name (without dashes), or "".
func flagHint(fs *flag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if best, ok := schema.NearestName(name, names); ok {
		return fmt.Sprintf(" (did you mean %q?)", "--"+best)
	}
	return ""
}

// usageFail reports a usage error of command path (e.g. "memory save") on
// one line with the pointer to its help, and returns exitUsage.
func usageFail(w io.Writer, path string, err error) int {
	fmt.Fprintf(w, "agent-ls %s: %v (run 'agent-ls %s --help')\n", path, err, path)
	return exitUsage
}

// help is one command's help text.
type help struct {
	path  string // "memory save"
	usage string // what follows the path on the usage line, e.g. "ID [flags]"
	body  string // the description, one or more paragraphs
}

// printHelp writes h to w: the usage line, the description, the command's
// example (from the command table) and fs's flags (nil for none).
func printHelp(w io.Writer, h help, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: agent-ls %s", h.path)
	if h.usage != "" {
		fmt.Fprintf(w, " %s", h.usage)
	}
	fmt.Fprintln(w)
	if body := strings.TrimSpace(h.body); body != "" {
		fmt.Fprintf(w, "\n%s\n", body)
	}
	if ex := exampleOf(h.path); ex != "" {
		fmt.Fprintf(w, "\nExample:\n  %s\n", ex)
	}
	if fs != nil {
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(w, "\nFlags:")
			printFlags(w, fs)
		}
	}
}

// printFlags lists fs's flags as "--name value" with their usage and
// default, in the style of the usage lines.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintln(w, line)
		usage = strings.ReplaceAll(usage, "\n", "\n        ")
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "0s" {
			if isStringFlag(f) {
				def = fmt.Sprintf("%q", def)
			}
			usage += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintf(w, "        %s\n", usage)
	})
}

// isStringFlag reports whether f holds a plain string (its default is quoted).
func isStringFlag(f *flag.Flag) bool {
	type getter interface{ Get() any }
	g, ok := f.Value.(getter)
	if !ok {
		return false
	}
	_, ok = g.Get().(string)
	return ok
}

// exampleOf is the example of the command at path ("memory save"), from
// the command table.
func exampleOf(path string) string {
	words := strings.Fields(path)
	if len(words) == 0 {
		return ""
	}
	for _, c := range commands() {
		if c.name != words[0] {
			continue
		}
		if len(words) == 1 {
			return c.example
		}
		if c.name == "memory" {
			for _, s := range memorySubs() {
				if s.name == words[1] {
					return s.example
				}
			}
		}
		if c.name == "token" {
			for _, s := range tokenSubs() {
				if s.name == words[1] {
					return s.example
				}
			}
		}
	}
	return ""
}

// didYouMean is ` (did you mean "X"?)` for the one name of names nearest
// to s (schema.NearestName, the rule the language server's quick fix uses),
// or "".
func didYouMean(s string, names []string) string {
	if best, ok := schema.NearestName(s, names); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// durationVar defines a duration flag that must be positive: the one rule
// of --lock-timeout and the --http timeouts, where zero would mean "the
// default" or "no limit" to the layer below, never what a user typing 0
// means. A value that is not positive is a usage error naming the flag.
func durationVar(fs *flag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	if !strings.Contains(usage, "`") {
		usage += " (a positive `duration`)"
	}
	fs.Var((*positiveDuration)(p), name, usage)
}

// positiveDuration is the flag.Value of durationVar.
type positiveDuration time.Duration

func (d *positiveDuration) String() string { return time.Duration(*d).String() }

func (d *positiveDuration) Set(v string) error {
	x, err := time.ParseDuration(v)
	if err != nil || x <= 0 {
		return errors.New("want a positive duration such as 500ms, 2s or 1m")
	}
	*d = positiveDuration(x)
	return nil
}
