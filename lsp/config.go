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

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
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
	Actor      store.Actor
	// Problem is why the config file could not be used ("" when fine).
	Problem string
}

// workspaceFor resolves the workspace of a file or directory: the nearest
// .agent-ls.yaml walking up (never above the workspace folder holding it), then
// initializationOptions on top. Results are cached until a config changes.
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
	cfgPath := ""
	if folder, ok := s.folderOf(dir); ok {
		cfgPath = findConfig(dir, folder)
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

	ws := &workspaceInfo{}
	switch {
	case cfgPath != "":
		ws.Root, ws.ConfigPath = filepath.Dir(cfgPath), cfgPath
		cfg, err := loadWorkspaceConfig(cfgPath)
		if err != nil {
			ws.Problem = err.Error()
		}
		ws.Config = cfg
	case root != "":
		ws.Root = root
	default:
		ws.Root = dir
	}
	cfg := ws.Config
	if init.StorePath != "" {
		cfg.Store = init.StorePath
	}
	if len(init.Scope) > 0 {
		cfg.Scope = init.Scope
	}
	if init.Actor != "" {
		cfg.Actor = init.Actor
	}
	if init.Budgets != nil {
		cfg.Budgets = *init.Budgets
	}
	ws.Config = cfg.WithDefaults()
	ws.StorePath = ws.Config.Store
	if !filepath.IsAbs(ws.StorePath) {
		ws.StorePath = filepath.Join(ws.Root, ws.StorePath)
	}
	actor := ws.Config.Actor
	if actor == "" {
		user := s.opts.Getenv("USER")
		if user == "" {
			user = "unknown"
		}
		actor = "human:" + user
	}
	a, err := store.ParseActor(actor)
	if err != nil {
		a = store.Actor{Kind: store.ActorHuman, Name: "unknown"}
		if ws.Problem == "" {
			ws.Problem = err.Error()
		}
	}
	ws.Actor = a
	s.mu.Lock()
	if s.workspaces == nil {
		s.workspaces = map[string]*workspaceInfo{}
	}
	_, seen := s.workspaces[key]
	s.workspaces[key] = ws
	s.mu.Unlock()
	if ws.Problem != "" && !seen {
		s.showMessage(protocol.MessageTypeWarning, "agent-ls: workspace configuration: "+ws.Problem)
	}
	return ws
}

// forgetWorkspaces drops cached workspace configs (a config file changed).
func (s *server) forgetWorkspaces() {
	s.mu.Lock()
	s.workspaces = map[string]*workspaceInfo{}
	s.mu.Unlock()
}

// findConfig walks up from dir to the nearest .agent-ls.yaml, stopping
// after stop when it is set (the workspace folder).
func findConfig(dir, stop string) string {
	for d := dir; ; {
		p := filepath.Join(d, schema.WorkspaceConfigName)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
		parent := filepath.Dir(d)
		if parent == d || stop != "" && d == stop {
			return ""
		}
		d = parent
	}
}

// loadWorkspaceConfig reads .agent-ls.yaml with the schema package's
// validation; the first error problem is returned as file:line:col: msg, and
// the valid part of the config is still used.
func loadWorkspaceConfig(path string) (schema.WorkspaceConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return schema.WorkspaceConfig{}, fmt.Errorf("read workspace config: %w", err)
	}
	cfg, problems, err := schema.ParseWorkspaceConfig(path, data)
	if err != nil {
		return schema.WorkspaceConfig{}, err
	}
	for _, p := range problems {
		if p.Severity == schema.SeverityError {
			return cfg, fmt.Errorf("%s:%d:%d: %s", path, p.Range.Start.Line+1, p.Range.Start.Character+1, p.Message)
		}
	}
	return cfg, nil
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
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

var statPath = os.Stat
