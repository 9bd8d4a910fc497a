package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// storeAt saves content as the agent of agentText into a fresh store at
// path (outside the watched store directory), so it can be moved into place.
func storeAt(t *testing.T, path, agentText, content, key, conv string) {
	t.Helper()
	agentSave(t, &testEnv{root: filepath.Dir(path), storePath: path}, agentText, content, "background.projectContext."+key, conv)
}

// statusCount counts agent-ls/status notifications of uri in state.
func statusCount(ns []note, uri protocol.DocumentURI, state StoreState) int {
	n := 0
	for _, x := range ns {
		var s Status
		if x.method == methodStatus && json.Unmarshal(x.params, &s) == nil && s.URI == uri && s.Store == state {
			n++
		}
	}
	return n
}

// warningsWith counts window/showMessage warnings containing text.
func warningsWith(c *testClient, text string) int {
	n := 0
	for _, p := range c.notesOf(protocol.MethodWindowShowMessage) {
		if strings.Contains(string(p), text) {
			n++
		}
	}
	return n
}

// TestStoreGoneAndReplaced: with the file watcher on, the store directory
// is deleted, then a store is moved back in, then the store file is renamed
// over by a fresh store, by a file that is not a database and by a store
// again, while the server runs. Each time the server notices without an
// edit (a status change, driven by the watcher), keeps publishing
// diagnostics, and its hints show exactly the records of the store now in
// place (none while it is gone or corrupt). The deletion and the corrupt
// file each give exactly one warning; a healthy replacement gives none.
func TestStoreGoneAndReplaced(t *testing.T) {
	env := newTestEnv(t)
	data, err := os.ReadFile("../testdata/agents/deploy.agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	path := env.write(t, "deploy.agent.yaml", text)
	storeAt(t, env.storePath, text, "Deploys go out Mondays", "deploy_window", "conv-1")
	spare := t.TempDir() // fresh stores and files are made here, then moved in

	c := startServer(t, Options{OpenStore: boltOpener(time.Now)})
	c.initialize(env.root, nil, true)
	uri := c.open(path, text, 1)
	c.awaitDiagnostics(uri, 1)
	c.waitFor("connected status", func(ns, _ []note) bool { return statusCount(ns, uri, StoreConnected) > 0 })

	version := 1
	// edit sends a change and waits for its diagnostics: they keep coming
	// whatever the store's state.
	edit := func(stage string) {
		t.Helper()
		version++
		c.change(uri, text, version)
		if d := c.awaitDiagnostics(uri, int32(version)); len(d.Diagnostics) != 0 {
			t.Errorf("%s: diagnostics of v%d: %+v", stage, version, d.Diagnostics)
		}
	}
	// expectHints asserts the hints show want and none of the others.
	all := []string{"Mondays", "Tuesdays", "Wednesdays", "Thursdays"}
	expectHints := func(stage, want string) {
		t.Helper()
		hs := c.hints(uri)
		for _, day := range all {
			h := hintWith(hs, day)
			if day == want && (h == nil || !strings.HasPrefix(h.Label, "+ ")) {
				t.Errorf("%s: no promoted hint for %q in %+v", stage, day, hs)
			}
			if day != want && h != nil {
				t.Errorf("%s: hint %q from a store no longer in place", stage, h.Label)
			}
		}
		if want == "" && len(hs) != 0 {
			t.Errorf("%s: hints without a store: %+v", stage, hs)
		}
	}
	// awaitState waits until the server has reported uri in state one more
	// time than before the fault (the watcher re-ran the file).
	awaitState := func(stage string, state StoreState, before int) {
		t.Helper()
		c.waitFor(stage+": "+string(state)+" status", func(ns, _ []note) bool { return statusCount(ns, uri, state) > before })
	}
	moveIn := func(src string) {
		t.Helper()
		if err := os.Rename(src, env.storePath); err != nil {
			t.Fatal(err)
		}
	}
	expectHints("start", "Mondays")

	// 1. The store directory is deleted.
	missing := countOf(c, uri, StoreMissing)
	if err := os.RemoveAll(filepath.Dir(env.storePath)); err != nil {
		t.Fatal(err)
	}
	awaitState("directory deleted", StoreMissing, missing)
	edit("directory deleted")
	expectHints("directory deleted", "")
	if fileExists(filepath.Dir(env.storePath)) {
		t.Errorf("the server re-created the deleted store directory")
	}

	// 2. A store is moved back into a new directory.
	storeAt(t, filepath.Join(spare, "tuesday.db"), text, "Deploys go out Tuesdays", "deploy_window", "conv-2")
	connected := countOf(c, uri, StoreConnected)
	if err := os.Mkdir(filepath.Dir(env.storePath), 0o755); err != nil {
		t.Fatal(err)
	}
	moveIn(filepath.Join(spare, "tuesday.db"))
	awaitState("store back", StoreConnected, connected)
	edit("store back")
	expectHints("store back", "Tuesdays")

	// 3. The store file is renamed over by a fresh store: no state change,
	// so the watcher's re-run shows as an inlay hint refresh.
	storeAt(t, filepath.Join(spare, "wednesday.db"), text, "Deploys go out Wednesdays", "deploy_window", "conv-3")
	refreshes := c.refreshCount()
	moveIn(filepath.Join(spare, "wednesday.db"))
	c.awaitRefresh(refreshes)
	edit("replaced by a store")
	expectHints("replaced by a store", "Wednesdays")

	// 4. Renamed over by a file that is not a database.
	junk := filepath.Join(spare, "junk.db")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a bbolt file\n", 512)), 0o644); err != nil {
		t.Fatal(err)
	}
	corrupt := countOf(c, uri, StoreCorrupt)
	moveIn(junk)
	awaitState("replaced by junk", StoreCorrupt, corrupt)
	edit("replaced by junk")
	expectHints("replaced by junk", "")

	// 5. A store again.
	storeAt(t, filepath.Join(spare, "thursday.db"), text, "Deploys go out Thursdays", "deploy_window", "conv-4")
	connected = countOf(c, uri, StoreConnected)
	moveIn(filepath.Join(spare, "thursday.db"))
	awaitState("store again", StoreConnected, connected)
	edit("store again")
	expectHints("store again", "Thursdays")

	if n := warningsWith(c, "is gone"); n != 1 {
		t.Errorf("%d warnings that the store is gone, want exactly 1", n)
	}
	if n := warningsWith(c, "corrupt"); n != 1 {
		t.Errorf("%d corrupt warnings, want exactly 1", n)
	}
	if n := len(c.notesOf(protocol.MethodWindowShowMessage)); n != 2 {
		t.Errorf("%d warnings in all, want 2: %s", n, c.notesOf(protocol.MethodWindowShowMessage))
	}
}

func countOf(c *testClient, uri protocol.DocumentURI, state StoreState) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return statusCount(c.notes, uri, state)
}
