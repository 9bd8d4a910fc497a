package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
)

const initUsage = `Starts a workspace in DIR (default: the current directory; created when missing):
  .agent-ls.yaml     the workspace configuration, commented (scope, store, promotion and budget examples)
  NAME.agent.yaml    a small, commented agent that validates, lints clean and renders
  .gitignore         gains the line .agent-memory/ (the memory store is data, not source):
                     created when missing, appended to once when it lacks the line
Then prints the next three commands, to run from DIR.

init never overwrites a file. An existing .agent-ls.yaml or NAME.agent.yaml is
left byte for byte as it is and named on stderr; the other files are still
written (so 'agent-ls init --agent NAME' adds a second agent to a workspace),
and the exit code is 1. With nothing refused the exit code is 0.

--agent NAME is the agent's roleTemplate.name and its file name: it passes the
identifier rule every name passes and, being a file name too, is a letter or
digit followed by letters, digits, '.', '_' or '-'.
--format json prints {"dir", "written", "refused", "next"} instead of text.`

// defaultInitAgent is the agent name init uses without --agent.
const defaultInitAgent = "my-agent"

// initNameRe is what an agent name must look like to be a file name and a
// word a shell passes unquoted, besides schema.CheckIdentifier.
var initNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// gitignoreLine is the line init adds to .gitignore: the default store's
// directory (schema.DefaultStorePath).
const gitignoreLine = ".agent-memory/"

// initResult is what init did, for --format json.
type initResult struct {
	Dir     string   `json:"dir"`
	Written []string `json:"written"`
	Refused []string `json:"refused"`
	Next    []string `json:"next"`
}

// runInit is `agent-ls init [DIR] [--agent NAME]`.
func runInit(_ context.Context, e *env, args []string) int {
	fset := flag.NewFlagSet("init", flag.ContinueOnError)
	agent := fset.String("agent", defaultInitAgent, "the agent's `name` (roleTemplate.name; the file is NAME.agent.yaml)")
	format := fset.String("format", "text", "output `format`: text or json")
	pos, err := parseArgs(fset, args)
	if errors.Is(err, errHelp) {
		printHelp(e.stdout, help{path: "init", usage: "[DIR] [--agent NAME] [--format text|json]", body: initUsage}, fset)
		return exitOK
	}
	if err != nil {
		return usageFail(e.stderr, "init", err)
	}
	if *format != "text" && *format != "json" {
		return usageFail(e.stderr, "init", fmt.Errorf("--format %q: want text or json", *format))
	}
	if len(pos) > 1 {
		return usageFail(e.stderr, "init", fmt.Errorf("one DIR at most, got %d arguments", len(pos)))
	}
	name := *agent
	if err := schema.CheckIdentifier("--agent", name); err != nil {
		return usageFail(e.stderr, "init", err)
	}
	if !initNameRe.MatchString(name) {
		return usageFail(e.stderr, "init", errors.New("--agent: want a letter or digit followed by letters, digits, '.', '_' or '-' (it names the agent file)"))
	}
	dirArg := "."
	if len(pos) == 1 {
		dirArg = pos[0]
	}
	if dirArg == "" {
		return usageFail(e.stderr, "init", errors.New("empty DIR"))
	}
	dir := resolve(e.cwd, dirArg)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(e.stderr, "agent-ls init: %v\n", err)
		return exitUsage
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		fmt.Fprintf(e.stderr, "agent-ls init: %s is not a directory\n", dirArg)
		return exitUsage
	}

	res := initResult{Dir: dir, Written: []string{}, Refused: []string{}, Next: []string{}}
	agentFile := name + ".agent.yaml"
	code := exitOK
	for _, f := range []struct{ name, text string }{
		{schema.WorkspaceConfigName, initWorkspaceText},
		{agentFile, initAgentText(name)},
	} {
		err := createNew(filepath.Join(dir, f.name), f.text)
		switch {
		case err == nil:
			res.Written = append(res.Written, f.name)
		case errors.Is(err, fs.ErrExist):
			res.Refused = append(res.Refused, f.name)
			fmt.Fprintf(e.stderr, "agent-ls init: refused: %s exists (init never overwrites a file; it is left as it is)\n", filepath.Join(dirArg, f.name))
			code = exitFindings
		default:
			fmt.Fprintf(e.stderr, "agent-ls init: %v\n", err)
			return exitUsage
		}
	}
	changed, err := ensureGitignore(filepath.Join(dir, ".gitignore"))
	if err != nil {
		fmt.Fprintf(e.stderr, "agent-ls init: %v\n", err)
		return exitUsage
	}
	if changed {
		res.Written = append(res.Written, ".gitignore")
	}
	if slices.Contains(res.Written, agentFile) {
		res.Next = initNext(name)
	}

	if *format == "json" {
		out, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			fmt.Fprintf(e.stderr, "agent-ls init: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(e.stdout, "%s\n", out)
		return code
	}
	for _, f := range res.Written {
		fmt.Fprintf(e.stdout, "wrote %s\n", filepath.Join(dirArg, f))
	}
	if len(res.Next) > 0 {
		where := "here"
		if filepath.Clean(dirArg) != "." {
			where = "from " + dirArg
		}
		fmt.Fprintf(e.stdout, "\nNext, run %s: save a fact the agent learned, see it in the composed prompt, open the lens (its URL) to review it:\n", where)
		for _, c := range res.Next {
			fmt.Fprintf(e.stdout, "  %s\n", c)
		}
	}
	return code
}

// initNext is the three commands init prints, each run from the workspace
// directory as printed.
func initNext(name string) []string {
	return []string{
		"agent-ls memory save --scope agent=" + name + " --target background.projectContext.deploy_window \"Production deploys happen on Tuesdays and Thursdays\"",
		"agent-ls render " + name + ".agent.yaml --annotate",
		"agent-ls lens",
	}
}

// createNew writes text to a new file at path; an existing file (of any
// type, a dangling symlink included) is fs.ErrExist and stays untouched.
func createNew(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ensureGitignore makes the .gitignore at path ignore the store directory:
// it creates the file with the line, appends the line when no line already
// ignores .agent-memory, and otherwise leaves it alone. It reports whether
// it wrote.
func ensureGitignore(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, createNew(path, "# the agent-ls memory store (agent-ls init)\n"+gitignoreLine+"\n")
	}
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("%s is not a regular file: add the line %s to it yourself", path, gitignoreLine)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch strings.TrimSpace(line) {
		case ".agent-memory", ".agent-memory/", "/.agent-memory", "/.agent-memory/", ".agent-memory/*", "/.agent-memory/*":
			return false, nil
		}
	}
	add := gitignoreLine + "\n"
	if len(data) > 0 && data[len(data)-1] != '\n' {
		add = "\n" + add
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return false, err
	}
	if _, err := f.WriteString(add); err != nil {
		f.Close()
		return false, err
	}
	return true, f.Close()
}

// initWorkspaceText is the .agent-ls.yaml init writes: valid as written,
// every optional key explained and commented out.
const initWorkspaceText = `# agent-ls workspace configuration, written by 'agent-ls init'.
# agent-ls finds this file by walking up from an agent file (like .git), so its
# directory is the workspace root. Every key is optional; unset keys take their
# defaults. Schema: https://agent-ls.dev/schema/workspace.schema.json

# The base scope of every memory read and written in this workspace. The
# ` + "`agent`" + ` key comes from each agent file's roleTemplate.name; do not set it here.
scope:
  project: my-project

# The memory store, relative to this file (default below; init added
# .agent-memory/ to .gitignore: memories are data, not source).
# store: .agent-memory/memory.db

# Who CLI approvals and editor code actions act as (default human:$USER).
# actor: human:ana

# How memories earn their place in the prompt.
# promotion:
#   recurrence: 2        # distinct conversations that promote a learned heuristic or example
#   proposalExpiry: 72h  # how long a proposal for a guarded slot waits for a human

# Characters of memory-derived text each primitive may add to the prompt;
# records over budget spill to the recall block (defaults: background 2000,
# judgment 1500, example 1500, awareness 800, recovery 400, manual 800).
# The ceiling limits the whole composed prompt, authored and learned
# (default 32000 characters); over it is a hard lint error.
# budgets:
#   background: 2000
#   judgment: 1500
# ceiling: 32000

# Lint severity per rule id: off, error, warning, info or hint.
# lint:
#   rules:
#     near-duplicate: warning
`

// initAgentText is the NAME.agent.yaml init writes.
func initAgentText(name string) string {
	return strings.NewReplacer("{{NAME}}", name, "{{NAMEVALUE}}", schema.YAMLScalar(name)).Replace(`# An agent definition, written by 'agent-ls init'. agent-ls composes the
# agent's system prompt from this file and folds the memories the agent earns
# into its typed slots: 'agent-ls render {{NAME}}.agent.yaml' prints the result.
# Describe your own agent here; 'agent-ls validate' and the editor integration
# (agent-ls serve) check it against the agent schema.
roleTemplate:
  # The agent's name: the agent scope key of its memories
  # (agent-ls memory save --scope agent={{NAME}} ...) and its name on the CLI.
  name: {{NAMEVALUE}}
  # Who the agent is. Locked: memories never change it.
  persona:
    identity: a careful assistant for the my-project engineering team
    tone: concise and friendly
    priorities:
      - Answer from the project's documentation and code before guessing
      - Say plainly what you do not know
    principles:
      - Never run a destructive command without asking first
  # How the agent decides, per domain. Learned heuristics and examples
  # (--target judgment.code-review.heuristics) join these once they recur in
  # distinct conversations; constraints and escalation triggers need a human.
  judgments:
    - domain: code-review
      heuristics:
        - Point out missing tests before style issues
      constraints:
        - Never approve a change that disables a failing test
      escalationTriggers:
        - The change touches authentication or payments
  # What the agent is responsible for.
  responsibilities:
    - key: review
      name: Review changes
      description: Read pull requests and comment on correctness, tests and clarity.
    - key: answer
      name: Answer questions
      description: Explain how the project works, pointing at the code.
mission:
  objective: Help the my-project team ship correct, well-tested changes.
  successCriteria:
    - Every review names the most important problem first
# What the agent knows about its surroundings. Learned facts
# (--target background.projectContext.KEY) are added here at once.
background:
  projectContext:
    repository: my-project on the team's Git server
    language: Go
  conventions:
    branches: Feature branches reach main through reviewed pull requests
# Where the agent can look things up.
awareness:
  domains:
    - name: code
      description: The project's source code and its history
      accessMethod: the repository search tool
`)
}
