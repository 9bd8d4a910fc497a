package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/store"
)

// TestOutsideConfigLanguageServer: a .agent-ls.yaml inside the workspace
// folder that is a symbolic link to a config outside it is never used
// (workspace.Load refuses it, the rule the command line follows): the
// server is read-only with a diagnostic on the config naming why, and the
// outside config's store is never opened (issue 31, reproduction 8).
func TestOutsideConfigLanguageServer(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	env := &testEnv{root: filepath.Join(parent, "ws")}
	out := filepath.Join(parent, "out")
	stolen := filepath.Join(out, "stolen.db")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "cfg.yaml"), []byte("store: "+stolen+"\nactor: human:mallory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := env.write(t, "deploy.agent.yaml", string(data))
	cfg := filepath.Join(env.root, ".agent-ls.yaml")
	if err := os.Symlink(filepath.Join(out, "cfg.yaml"), cfg); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var opened []string
	open := boltOpener(time.Now)
	c := startServer(t, Options{OpenStore: func(ctx context.Context, p string) (store.Store, error) {
		mu.Lock()
		opened = append(opened, p)
		mu.Unlock()
		return open(ctx, p)
	}})
	c.initialize(env.root, nil, false)
	uri := c.open(path, string(data), 1)
	c.awaitDiagnostics(uri, 1)
	cfgURI := pathToURI(cfg)
	c.waitFor("the config's diagnostic", func(ns, _ []note) bool {
		for _, d := range diagsOf(ns, cfgURI) {
			for _, dg := range d.Diagnostics {
				if strings.Contains(dg.Message, "resolves outside the workspace root") {
					return true
				}
			}
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	for _, p := range opened {
		if strings.HasPrefix(p, out) {
			t.Errorf("opened the outside config's store %s", p)
		}
	}
	if _, err := os.Stat(stolen); err == nil {
		t.Error("the outside config's store was created")
	}
}

// TestNotAnAgentFileLanguageServer: an editor's *.agent.yaml that is
// clearly not an agent file gets one diagnostic saying so, quoting none of
// its keys or values.
func TestNotAnAgentFileLanguageServer(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	text := "password: hunter2\napi_token: tok123\nroot:$6$salt$hash:19000:0:99999:7:::\n"
	path := env.write(t, "notes.agent.yaml", text)
	c := startServer(t, Options{OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, nil, false)
	uri := c.open(path, text, 1)
	d := c.awaitDiagnostics(uri, 1)
	if len(d.Diagnostics) != 1 || !strings.Contains(d.Diagnostics[0].Message, "not an agent file") {
		t.Fatalf("want one 'not an agent file' diagnostic, got %+v", d.Diagnostics)
	}
	for _, s := range []string{"hunter2", "password", "api_token", "tok123", "salt"} {
		if strings.Contains(string(d.Raw), s) || strings.Contains(d.Diagnostics[0].Message, s) {
			t.Errorf("the diagnostic quotes %q: %s", s, d.Diagnostics[0].Message)
		}
	}
}

// TestWorkspaceFoldersChange: the server takes workspace folder changes
// (it advertises workspace.workspaceFolders.changeNotifications): an
// agent file in a folder added after initialize is served, and one in a
// folder removed is not any more (its diagnostics cleared, its requests
// refused as outside the folders). Before, the notification was dropped:
// files in a folder added to the editor's workspace got nothing at all.
func TestWorkspaceFoldersChange(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	a, b := filepath.Join(parent, "a"), filepath.Join(parent, "b")
	text := strings.Replace(cleanAgent, "    tone: y\n", "    tnoe: y\n", 1)
	(&testEnv{root: a}).write(t, "a.agent.yaml", cleanAgent)
	path := (&testEnv{root: b}).write(t, "b.agent.yaml", text)
	c := startServer(t, Options{NoWatch: true})
	res := c.initialize(a, nil, false)
	caps, _ := res["capabilities"].(map[string]any)
	ws, _ := caps["workspace"].(map[string]any)
	if folders, _ := ws["workspaceFolders"].(map[string]any); folders["supported"] != true || folders["changeNotifications"] != true {
		t.Fatalf("capabilities.workspace %v: want workspaceFolders supported with change notifications", caps["workspace"])
	}
	folderChange := func(added, removed []string) {
		list := func(paths []string) []any {
			out := []any{}
			for _, p := range paths {
				out = append(out, map[string]any{"uri": pathToURI(p), "name": filepath.Base(p)})
			}
			return out
		}
		c.notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": list(added), "removed": list(removed)}})
	}
	hover := func(uri protocol.DocumentURI) error {
		var res json.RawMessage
		return c.callErr(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": 1, "character": 3}}, &res)
	}

	folderChange([]string{b}, nil)
	uri := c.open(path, text, 1)
	if d := c.awaitDiagnostics(uri, 1); len(d.Diagnostics) != 1 || !strings.Contains(d.Diagnostics[0].Message, "tnoe") {
		t.Fatalf("diagnostics of a file in the added folder: %+v", d.Diagnostics)
	}
	if err := hover(uri); err != nil {
		t.Fatalf("hover in the added folder: %v", err)
	}

	folderChange(nil, []string{b})
	c.waitFor("the removed folder's diagnostics cleared", func(ns, _ []note) bool {
		ds := diagsOf(ns, uri)
		return len(ds) > 1 && len(ds[len(ds)-1].Diagnostics) == 0
	})
	if err := hover(uri); err == nil || !strings.Contains(err.Error(), "outside the workspace folders") {
		t.Fatalf("hover in the removed folder: %v, want refused as outside the folders", err)
	}

	// Every folder removed: nothing is served (it is not the absence of
	// folders at initialize, which confines nothing).
	folderChange(nil, []string{a})
	if err := hover(pathToURI(filepath.Join(a, "a.agent.yaml"))); err == nil || !strings.Contains(err.Error(), "outside the workspace folders") {
		t.Fatalf("hover with every folder removed: %v, want refused as outside the folders", err)
	}
}

// TestSecondFolderStore: an agent file without a .agent-ls.yaml in a
// second workspace folder composes from that folder's store
// (.agent-memory/memory.db under the folder holding it), where the command
// line run in that folder saves; it used the first folder's store, so the
// editor showed none of the folder's memories (and its status named the
// other folder's store).
func TestSecondFolderStore(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	a, b := filepath.Join(parent, "a"), filepath.Join(parent, "b")
	envB := &testEnv{root: b, storePath: filepath.Join(b, ".agent-memory", "memory.db")}
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	(&testEnv{root: a}).write(t, "other.agent.yaml", cleanAgent)
	path := envB.write(t, "deploy.agent.yaml", string(data))
	agentSave(t, envB, string(data), "Deploys go out Thursdays", "background.projectContext.deploy_window", "conv-1")
	c := startServer(t, Options{NoWatch: true, OpenStore: boltOpener(time.Now)})
	c.initialize(a, nil, false)
	c.notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": pathToURI(b), "name": "b"}}, "removed": []any{}}})
	uri := c.open(path, string(data), 1)
	c.awaitDiagnostics(uri, 1)
	if h := hintWith(c.hints(uri), "Deploys go out Thursdays"); h == nil {
		t.Fatalf("no hint of the memory in %s's store: %+v", b, c.hints(uri))
	}
	if _, err := os.Stat(filepath.Join(a, ".agent-memory")); err == nil {
		t.Errorf("the first folder got a store directory")
	}
}

// TestFolderAddedUnderOpenFile: an agent file opened (and edited) before
// the folder holding it joins the workspace is served from the editor's
// text once it does, and again after its folder leaves and comes back:
// the server follows the text of every open agent file and serves those
// the folders hold. It did not track a file opened outside the folders,
// so once its folder was added the server answered for the file on disk
// at the editor's positions, and published nothing for it.
func TestFolderAddedUnderOpenFile(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	a, b := filepath.Join(parent, "a"), filepath.Join(parent, "b")
	(&testEnv{root: a}).write(t, "a.agent.yaml", cleanAgent)
	path := (&testEnv{root: b}).write(t, "b.agent.yaml", cleanAgent)
	c := startServer(t, Options{NoWatch: true})
	c.initialize(a, nil, false)
	folders := func(added, removed string) {
		list := func(p string) []any {
			if p == "" {
				return []any{}
			}
			return []any{map[string]any{"uri": pathToURI(p), "name": filepath.Base(p)}}
		}
		c.notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": list(added), "removed": list(removed)}})
	}
	uri := c.open(path, cleanAgent, 1)
	// Unsaved edits: a comment line above, and a misspelt key.
	edited := "# edited\n" + strings.Replace(cleanAgent, "    tone: y\n", "    tnoe: y\n", 1)
	c.change(uri, edited, 2)
	hover := func() string {
		var h protocol.Hover
		c.call(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": uri},
			"position": map[string]any{"line": 2, "character": 4}}, &h)
		return h.Contents.Value
	}
	served := func(when string) {
		t.Helper()
		c.waitFor("diagnostics of the edited text "+when, func(ns, _ []note) bool {
			ds := diagsOf(ns, uri)
			if len(ds) == 0 {
				return false
			}
			last := ds[len(ds)-1]
			return last.Version == 2 && len(last.Diagnostics) == 1 && strings.Contains(last.Diagnostics[0].Message, "tnoe")
		})
		if h := hover(); !strings.Contains(h, "`/roleTemplate/name`") {
			t.Fatalf("hover at 2:4 %s: %q, want name (line 2 of the editor's text)", when, h)
		}
	}
	folders(b, "")
	served("once the folder is added")
	folders("", b)
	c.waitFor("the removed folder's diagnostics cleared", func(ns, _ []note) bool {
		ds := diagsOf(ns, uri)
		return len(ds[len(ds)-1].Diagnostics) == 0
	})
	folders(b, "")
	served("once the folder is back")
}

// TestNonFileFoldersServeNothing: a client that names its workspace only
// with folders that are not file:// (a virtual file system) is confined
// to them, so no file on disk is served; before, no usable folder meant no
// confinement at all, and the store of any file it opened was read.
func TestNonFileFoldersServeNothing(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	text := deployText(t)
	path := env.write(t, "deploy.agent.yaml", text)
	agentSave(t, env, text, "SECRETFACT deploys on Tuesdays", "background.projectContext.deploy_window", "conv-1")
	c := startServer(t, Options{OpenStore: boltOpener(time.Now)})
	var res map[string]any
	c.call(protocol.MethodInitialize, map[string]any{"processId": 1, "capabilities": map[string]any{},
		"rootUri":          "vscode-vfs://github/acme/agents",
		"workspaceFolders": []any{map[string]any{"uri": "vscode-vfs://github/acme/agents", "name": "agents"}}}, &res)
	c.notify(protocol.MethodInitialized, map[string]any{})
	uri := c.open(path, text, 1)
	var hs []InlayHint
	err := c.callErr(methodInlayHint, map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 9999, "character": 0}}}, &hs)
	if err == nil || !strings.Contains(err.Error(), "outside the workspace folders") {
		t.Errorf("inlay hints of a file outside the virtual folders: %v, %+v; want refused as outside the workspace folders", err, hs)
	}
	if h := hintWith(hs, "SECRETFACT"); h != nil {
		t.Errorf("the store of a file outside the folders was read: %+v", h)
	}
}
