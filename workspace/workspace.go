// Package workspace finds an agent-ls workspace on disk: the nearest
// .agent-ls.yaml above a file or directory (like .git), its config with
// defaults applied, the store path, and the agent files under its root.
// It is the I/O edge around the pure schema package.
package workspace

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store/location"
)

// Workspace is a directory tree of agent files sharing one config and store.
type Workspace struct {
	// Root is the directory holding the config, or the start directory when
	// there is none.
	Root string
	// ConfigPath is the absolute path of .agent-ls.yaml, "" when none.
	ConfigPath string
	// Config is the config with the documented defaults applied.
	Config schema.WorkspaceConfig
	// StorePath is the absolute path of the memory store.
	StorePath string
	// Err is why the config could not be used (nil when it could): a
	// workspace returned with an error by Load carries it, and is for
	// reading only.
	Err error

	// names memoizes FindAgent's parse of each agent file by content.
	names agentNames
}

// agentNames maps an agent file's path to the roleTemplate name its
// content (by SHA-256) declares, so that looking up several agents parses
// each file once while it is unchanged. Safe for concurrent use.
type agentNames struct {
	mu sync.Mutex
	m  map[string]agentName
}

type agentName struct {
	sum   [sha256.Size]byte
	name  string
	named bool // roleTemplate.name is a string
	ok    bool // the file parsed
}

// nameOf is the roleTemplate name data (the content of file f) declares
// (named false when it declares no string name); ok is false when it does
// not parse.
func (n *agentNames) nameOf(f string, data []byte) (name string, named, ok bool) {
	sum := sha256.Sum256(data)
	n.mu.Lock()
	e, hit := n.m[f]
	n.mu.Unlock()
	if hit && e.sum == sum {
		return e.name, e.named, e.ok
	}
	e = agentName{sum: sum}
	if d, err := schema.ParseDocument(f, data); err == nil {
		v, _ := d.ValueAt("/roleTemplate/name")
		e.name, e.named = v.(string)
		e.ok = true
	}
	n.mu.Lock()
	if n.m == nil || len(n.m) >= maxAgentNames {
		n.m = map[string]agentName{}
	}
	n.m[f] = e
	n.mu.Unlock()
	return e.name, e.named, e.ok
}

// maxAgentNames bounds agentNames (a workspace with more agent files
// parses again after the memo is cleared).
const maxAgentNames = 4096

// ConfigError is an invalid workspace config: its problems, each printed as
// file:line:col.
type ConfigError struct {
	Path     string
	Problems []schema.Problem
	// Hint is ` (did you mean "KEY"?)` when the first problem is an
	// unknown key near a valid one (schema.SuggestKey), else "".
	Hint string
}

func (e *ConfigError) Error() string {
	if len(e.Problems) == 0 {
		return e.Path + ": invalid workspace config"
	}
	p := e.Problems[0]
	msg := fmt.Sprintf("%s:%d:%d: %s%s", e.Path, p.Range.Start.Line+1, p.Range.Start.Character+1, p.Message, e.Hint)
	if n := len(e.Problems) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return msg
}

// Find walks up from start (a file or a directory) to the nearest directory
// holding .agent-ls.yaml and loads it. With none, the workspace is start's
// directory with the default config. An unreadable or invalid config is an
// error: a *schema.ParseError or a *ConfigError, each with file:line:col
// (see Load for the workspace returned with it).
func Find(start string) (*Workspace, error) {
	return FindWithin(start, "")
}

// FindWithin is Find that never looks above stop (when stop is set): the
// language server searches up to the workspace folder holding a file and
// no further, since a config outside it could point the store anywhere.
func FindWithin(start, stop string) (*Workspace, error) {
	dir, err := startDir(start)
	if err != nil {
		return nil, err
	}
	p, err := ConfigPathWithin(dir, stop)
	if err != nil {
		return nil, err
	}
	if p != "" {
		return Load(p)
	}
	return Default(dir), nil
}

func startDir(start string) (string, error) {
	abs, err := filepath.Abs(start)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", start, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return filepath.Dir(abs), nil
	}
	return abs, nil
}

// ConfigPathWithin is the .agent-ls.yaml nearest above dir (an absolute
// directory), never looking above stop when stop is set; "" when there is
// none.
func ConfigPathWithin(dir, stop string) (string, error) {
	for d := dir; ; {
		if p, err := configIn(d); p != "" || err != nil {
			return p, err
		}
		parent := filepath.Dir(d)
		if parent == d || stop != "" && d == stop {
			return "", nil
		}
		d = parent
	}
}

// configIn is the workspace config directly in d: its path, "" when there
// is none (nothing of that name, or a directory), or the error of a name
// that cannot be checked.
func configIn(d string) (string, error) {
	p := filepath.Join(d, schema.WorkspaceConfigName)
	fi, err := os.Stat(p)
	switch {
	case err == nil && !fi.IsDir():
		return p, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("workspace config %s: %w", p, err)
	}
	return "", nil
}

// Default is the workspace rooted at dir with no config: the documented
// defaults.
func Default(dir string) *Workspace {
	cfg := schema.WorkspaceConfig{}.WithDefaults()
	return &Workspace{Root: dir, Config: cfg, StorePath: storePath(dir, cfg.Store)}
}

// Load reads the workspace config at path; its directory is the root. A
// config that does not parse (*schema.ParseError) or breaks the schema
// (*ConfigError) is an error; with it Load also returns the workspace made
// of the config's valid part (the defaults where the text does not parse),
// so a surface can keep reading in a read-only mode. Nothing may act (write,
// choose an actor) on a workspace returned with an error. A config that
// resolves outside its directory (a symbolic link or .. leading out) is
// not read: an *OutsideError, and no workspace.
func Load(path string) (*Workspace, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("workspace config %s: %w", path, err)
	}
	if err := Confine(filepath.Dir(abs), abs); err != nil {
		return nil, err
	}
	data, err := ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace config: %w", err)
	}
	root := filepath.Dir(abs)
	partial := func(cfg schema.WorkspaceConfig, err error) (*Workspace, error) {
		cfg.Actor = "" // never act as a broken config's actor
		cfg = cfg.WithDefaults()
		return &Workspace{Root: root, ConfigPath: abs, Config: cfg, StorePath: storePath(root, cfg.Store), Err: err}, err
	}
	cfg, ps, err := schema.ParseWorkspaceConfig(abs, data)
	if err != nil {
		return partial(schema.WorkspaceConfig{}, err)
	}
	if len(ps) > 0 {
		return partial(cfg, &ConfigError{Path: abs, Problems: ps, Hint: keyHint(abs, data, ps[0])})
	}
	cfg = cfg.WithDefaults()
	return &Workspace{Root: root, ConfigPath: abs, Config: cfg, StorePath: storePath(root, cfg.Store)}, nil
}

// keyHint is ` (did you mean "KEY"?)` for problem p of the config at path
// when it is an unknown key near a valid one, else "": every command that
// loads the config says it, as validate does for any file.
func keyHint(path string, data []byte, p schema.Problem) string {
	if !strings.HasPrefix(p.Message, `unknown property "`) || p.Pointer == "" {
		return ""
	}
	doc, err := schema.ParseDocument(path, data)
	if err != nil || doc == nil {
		return ""
	}
	if best, ok := schema.SuggestKey(doc, schema.FileWorkspace, p.Pointer); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

func storePath(root, store string) string {
	if location.IsURL(store) {
		return store
	}
	if filepath.IsAbs(store) {
		return filepath.Clean(store)
	}
	return filepath.Join(root, store)
}

// skipDir reports directories never searched for agent files.
func skipDir(name string) bool {
	switch name {
	case ".git", "node_modules", ".agent-memory":
		return true
	}
	return false
}

// holdsConfig reports whether dir is the root of a workspace of its own:
// Find from a file in it stops there (configIn), with its config or with
// the error of a config it cannot check.
func holdsConfig(dir string) bool {
	p, err := configIn(dir)
	return p != "" || err != nil
}

// AgentFiles returns every agent file under the root, sorted, skipping .git,
// node_modules, .agent-memory and nested workspaces (AgentFilesUnder), and
// any that resolves outside the root (Within: a symbolic link leading out is
// never read).
func (w *Workspace) AgentFiles() ([]string, error) {
	files, err := AgentFilesUnder(w.Root)
	if err != nil {
		return nil, err
	}
	out := files[:0]
	for _, f := range files {
		if Within(w.Root, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// AgentFilesUnder returns every agent file under dir, sorted, skipping .git,
// node_modules and .agent-memory, and every directory below dir that holds
// its own .agent-ls.yaml: that is another workspace (its own store and
// scope, the one Find gives its files), whose agents are not dir's.
func AgentFilesUnder(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() {
			if p != dir && (skipDir(de.Name()) || holdsConfig(p)) {
				return filepath.SkipDir
			}
			return nil
		}
		if schema.IsAgentFile(de.Name()) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list agent files under %s: %w", dir, err)
	}
	sort.Strings(out)
	return out, nil
}

// NameOf is the roleTemplate.name the agent file f declares: "" when f
// does not read or parse or declares no string name. Like FindAgent's, the
// parse is remembered while f's content is unchanged.
func (w *Workspace) NameOf(f string) string {
	data, err := ReadFile(f)
	if err != nil {
		return ""
	}
	name, named, ok := w.names.nameOf(f, data)
	if !named || !ok {
		return ""
	}
	return name
}

// FindAgent returns the agent file under the root whose roleTemplate.name is
// name. Files that do not parse are skipped; none or several matches are
// errors.
func (w *Workspace) FindAgent(name string) (string, error) {
	files, err := w.AgentFiles()
	if err != nil {
		return "", err
	}
	var matches []string
	unreadable := 0
	for _, f := range files {
		data, err := ReadFile(f)
		if err != nil {
			unreadable++
			continue
		}
		got, named, ok := w.names.nameOf(f, data)
		if !ok {
			unreadable++
			continue
		}
		if named && got == name {
			matches = append(matches, f)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		msg := fmt.Sprintf("no agent named %q under %s", name, w.Root)
		if unreadable > 0 {
			msg += fmt.Sprintf(" (%d agent file(s) could not be read or parsed)", unreadable)
		}
		return "", errors.New(msg)
	}
	return "", fmt.Errorf("agent %q is defined in several files: %s", name, strings.Join(matches, ", "))
}
