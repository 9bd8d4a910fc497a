package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/workspace"
)

// initOptions are initialize's initializationOptions (docs/LSP-PROTOCOL.md);
// each set key overrides .agent-ls.yaml.
type initOptions struct {
	StorePath string            `json:"storePath,omitempty"`
	Scope     map[string]string `json:"scope,omitempty"`
	Actor     string            `json:"actor,omitempty"`
	Budgets   *schema.Budgets   `json:"budgets,omitempty"`
}

func parseInitOptions(raw json.RawMessage) (initOptions, error) {
	var o initOptions
	// Some clients (Neovim) encode an empty table as [].
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" || string(t) == "[]" {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return o, fmt.Errorf("initializationOptions: %w (known keys: storePath, scope, actor, budgets)", err)
	}
	if o.Actor != "" {
		if _, err := store.ParseActor(o.Actor); err != nil {
			return o, fmt.Errorf("initializationOptions: %w", err)
		}
	}
	return o, nil
}

// workspaceInfo is the resolved configuration of the agent files under one
// .agent-ls.yaml (or under the workspace root when there is none).
type workspaceInfo struct {
	Root       string // directory of the config file, or the workspace root
	ConfigPath string // "" when there is no .agent-ls.yaml
	Config     schema.WorkspaceConfig
	StorePath  string // absolute
	// Actor is who state-changing requests act as (engine.ResolveActor); the
	// zero Actor when the workspace is read-only for its config.
	Actor store.Actor
	// Problem is why the config file could not be used ("" when fine);
	// ProblemRange is where in ConfigPath.
	Problem      string
	ProblemRange protocol.Range
	// ReadOnly lists why state-changing requests are refused (readonly.go);
	// empty when the workspace is writable.
	ReadOnly []string
}

// workspaceFor resolves the workspace of a file or directory: the nearest
// .agent-ls.yaml walking up (never above the workspace folder holding it,
// workspace.FindWithin), then initializationOptions on top, then the actor
// (engine.ResolveActor). A config that does not parse or names an actor that
// does not parse makes the workspace read-only (readonly.go); nothing falls
// back to another actor. Results are cached until a config changes.
func (s *server) workspaceFor(path string) *workspaceInfo {
	dir := path
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		dir = filepath.Dir(path)
	}
	s.mu.Lock()
	root, init := s.root, s.init
	s.mu.Unlock()
	// The config is looked for up to the workspace folder holding the file,
	// never above it, and not at all for a path outside the folders (an
	// event in a store directory elsewhere, a client's watched-file change):
	// a .agent-ls.yaml outside the workspace could point the store anywhere.
	// Without a config, the workspace is the folder holding the file (the
	// first folder for a path no folder holds).
	cfgPath := ""
	if folder, ok := s.folderOf(dir); ok {
		cfgPath = findConfig(dir, folder)
		if folder != "" {
			root = folder
		}
	}
	key := cfgPath
	if key == "" {
		key = "root:" + root
		if root == "" {
			key = "dir:" + dir
		}
	}
	s.mu.Lock()
	if ws, ok := s.workspaces[key]; ok {
		s.mu.Unlock()
		return ws
	}
	s.mu.Unlock()

	var wsp *workspace.Workspace
	var loadErr error
	switch {
	case cfgPath != "":
		wsp, loadErr = workspace.Load(cfgPath)
		if wsp == nil {
			wsp = workspace.Default(filepath.Dir(cfgPath))
			wsp.ConfigPath, wsp.Err = cfgPath, loadErr
		}
	case root != "":
		wsp = workspace.Default(root)
	default:
		wsp = workspace.Default(dir)
	}
	ws := &workspaceInfo{Root: wsp.Root, ConfigPath: wsp.ConfigPath}
	cfg := wsp.Config
	if init.StorePath != "" {
		cfg.Store = init.StorePath
	}
	// The one scope rule (engine.Scope): the client's scope adds to the
	// workspace scope; a value contradicting it leaves the workspace
	// read-only with the reason (below).
	scope, scopeErr := engine.Scope(cfg.Scope, init.Scope)
	if scopeErr == nil {
		cfg.Scope = scope
	}
	if init.Budgets != nil {
		cfg.Budgets = *init.Budgets
	}
	ws.Config = cfg.WithDefaults()
	ws.StorePath = ws.Config.Store
	if !filepath.IsAbs(ws.StorePath) && !engine.IsURL(ws.StorePath) {
		ws.StorePath = filepath.Join(ws.Root, ws.StorePath)
	}
	if se, ok := scopeErr.(*engine.ScopeError); ok {
		se.Source = "initializationOptions.scope"
	}
	if scopeErr != nil {
		ws.ReadOnly = append(ws.ReadOnly, scopeErr.Error())
	}
	a, _, err := engine.ResolveActor(init.Actor, wsp, s.opts.Getenv)
	if err != nil {
		ws.Problem, ws.ProblemRange = configProblem(err)
		ws.ReadOnly = append(ws.ReadOnly, "the workspace configuration is invalid: "+ws.Problem)
	} else {
		ws.Actor = a
		ws.Config.Actor = a.String()
	}
	s.mu.Lock()
	if s.workspaces == nil {
		s.workspaces = map[string]*workspaceInfo{}
	}
	_, seen := s.workspaces[key]
	s.workspaces[key] = ws
	s.mu.Unlock()
	if ws.Problem != "" && !seen {
		s.configReadOnly(ws)
	} else if ws.Problem == "" && ws.ConfigPath != "" {
		s.clearConfigDiagnostic(ws.ConfigPath)
	}
	return ws
}

// configProblem is the message and range of a config error: the first
// problem of a *workspace.ConfigError or the position of a
// *schema.ParseError (the whole first line otherwise).
func configProblem(err error) (string, protocol.Range) {
	var ce *workspace.ConfigError
	if errors.As(err, &ce) && len(ce.Problems) > 0 {
		return err.Error(), toRange(ce.Problems[0].Range)
	}
	var pe *schema.ParseError
	if errors.As(err, &pe) {
		return err.Error(), toRange(pe.Range())
	}
	return err.Error(), protocol.Range{}
}

// forgetWorkspaces drops cached workspace configs (a config file changed).
func (s *server) forgetWorkspaces() {
	s.mu.Lock()
	s.workspaces = map[string]*workspaceInfo{}
	s.mu.Unlock()
}

// findConfig is the .agent-ls.yaml nearest above dir, never above stop
// (workspace.ConfigPathWithin); "" when there is none or it cannot be
// looked for.
func findConfig(dir, stop string) string {
	p, _ := workspace.ConfigPathWithin(dir, stop)
	return p
}

// uriToPath converts a file:// URI to a local path ("" for other schemes).
func uriToPath(u protocol.DocumentURI) string {
	p, err := url.Parse(string(u))
	if err != nil || p.Scheme != "file" {
		return ""
	}
	path := p.Path
	if runtime.GOOS == "windows" {
		path = strings.TrimPrefix(path, "/")
	}
	return filepath.FromSlash(path)
}

// pathToURI converts an absolute path to a file:// URI.
func pathToURI(path string) protocol.DocumentURI {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	return protocol.DocumentURI(u.String())
}

// fileExists reports whether path exists (errors other than not-exist count
// as existing: opening will report them).
// storeExists reports whether the store at location may hold records: a
// database URL always may (the server creates its tables on first use), a
// file when it exists.
func storeExists(location string) bool {
	return engine.IsURL(location) || fileExists(location)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

var statPath = os.Stat
