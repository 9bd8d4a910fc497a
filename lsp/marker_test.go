package lsp

// Marker tests, after gopls's internal/test/marker: each
// testdata/markers/*.txtar is a small workspace whose YAML files carry their
// own expectations as comments. TestMarkers runs each archive as a parallel
// subtest: it writes the workspace into t.TempDir(), seeds a real bbolt store,
// starts the server over the LSP wire protocol (startServer: net.Pipe and
// jsonrpc2), opens the files, waits (by event, never by sleeping) until each
// file's diagnostics have settled, then runs every marker's request and
// compares the answer.
//
// An archive's sections:
//
//	-- .agent-ls.yaml --     the workspace config (opened like an agent file)
//	-- NAME.agent.yaml --    agent files: written to disk and opened (didOpen)
//	-- NAME.memory.yaml --   any other file: written to disk only
//	-- saves.jsonl --        memories saved, in order, through the real save
//	                         path (the evolve engine as the agent, with the
//	                         workspace config, as the server builds it):
//	                         {"content": "...", "target": "background.projectContext.k",
//	                          "conversation": "c1", "file": "x.agent.yaml", "state": "promoted"}
//	                         "file" defaults to the only agent file; "state",
//	                         when given, is checked against the save's answer.
//	-- records.jsonl --      memory records imported as they are (the store's
//	                         Import, as `agent-ls memory import` does, as human:fixture)
//	-- @NAME --              a golden section, compared with a marker's answer;
//	                         `go test ./lsp -run TestMarkers -update` rewrites it
//
// A marker is `@kind(arg, ...)` inside a YAML comment (`# @hover(...)`);
// one comment may hold several. Its line is the line it sits on. An argument
// is a Go string ("..." or `...`), a regexp (re"..."), or a NAME (a golden
// section). A location regexp is matched against the marker's line before the
// comment; the position is the start of its first capture group if it has
// one (re"con()" is just after "con"), else the start of the match. A
// marker may sit on a comment-only line: `    # @complete(re"^    ()", x)`
// completes on that line at column 5. Arguments are Go literals, so a
// regexp with backslashes is written re`\(role\)`.
//
//	@diag(re"message", "code")           a diagnostic starting on this line
//	@diag(re"message", "code", re"loc")  ... starting at the column of loc
//	    Diagnostics are complete: any diagnostic of an opened file that no
//	    @diag matches fails the test.
//	@hover(re"loc", re"want", ...)       hover at loc; its Markdown matches
//	                                     every want
//	@inlayhint(NAME)                     all inlay hints of the file, one a
//	                                     line ("line:col label", 1-based),
//	                                     equal the golden section @NAME
//	@codelens("title", "command")        a code lens on this line with that
//	                                     title (and command, when given); in
//	                                     a file with any @codelens, every lens
//	                                     must be matched by one
//	@symbol(NAME)                        the document's outline (as in
//	                                     TestDocumentSymbolsGolden) equals @NAME
//	@complete(re"loc", "label", ...)     completion at loc offers exactly these
//	                                     labels, in this order
//	@complete(re"loc", NAME)             ... its items ("label | detail | new
//	                                     text") equal the golden section @NAME
//
// A failing marker reports "FIXTURE.txtar:LINE: @kind(...)" with the got and
// the want.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"go.lsp.dev/protocol"
	"golang.org/x/tools/txtar"

	"github.com/agent-ls/agent-ls/engine"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/bolt"
	"github.com/agent-ls/agent-ls/workspace"
)

func TestMarkers(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "markers", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no marker fixtures (%v)", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			t.Parallel()
			runMarkerFixture(t, f)
		})
	}
}

// markerArg is one argument of a marker.
type markerArg struct {
	kind byte // 's' string, 'r' regexp, 'n' name
	text string
	re   *regexp.Regexp
}

func (a markerArg) String() string {
	switch a.kind {
	case 'r':
		return "re" + strconv.Quote(a.text)
	case 's':
		return strconv.Quote(a.text)
	}
	return a.text
}

// marker is one @kind(args) in a file of a fixture.
type marker struct {
	kind string
	args []markerArg
	file string // the section's name
	line int    // 0-based line in the file
	code string // the line's text before its comment
	at   string // FIXTURE.txtar:LINE, for messages
	src  string // the marker as written
}

func (m *marker) String() string { return m.at + ": " + m.src }

// pos resolves the location regexp of argument i on the marker's line.
func (m *marker) pos(t *testing.T, i int) (protocol.Position, bool) {
	t.Helper()
	if i >= len(m.args) || m.args[i].kind != 'r' {
		t.Errorf("%s: argument %d must be a location regexp", m, i+1)
		return protocol.Position{}, false
	}
	idx := m.args[i].re.FindStringSubmatchIndex(m.code)
	if idx == nil {
		t.Errorf("%s: location %s matches nothing in %q", m, m.args[i], m.code)
		return protocol.Position{}, false
	}
	start := idx[0]
	if len(idx) >= 4 && idx[2] >= 0 {
		start = idx[2]
	}
	return protocol.Position{Line: uint32(m.line), Character: markerUTF16(m.code[:start])}, true
}

func markerUTF16(s string) uint32 {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return uint32(n)
}

var markerStart = regexp.MustCompile(`@([a-z]+)\(`)

// parseMarkers finds the markers in the comments of text, a section that
// starts on line first (1-based) of the archive fixture.
func parseMarkers(fixture, file, text string, first int) ([]*marker, error) {
	var out []*marker
	for i, line := range strings.Split(text, "\n") {
		hash := commentStart(line)
		if hash < 0 {
			continue
		}
		comment := line[hash:]
		for {
			loc := markerStart.FindStringSubmatchIndex(comment)
			if loc == nil {
				break
			}
			m := &marker{kind: comment[loc[2]:loc[3]], file: file, line: i, code: line[:hash],
				at: fmt.Sprintf("%s:%d", fixture, first+i)}
			args, rest, err := parseMarkerArgs(comment[loc[1]:])
			if err != nil {
				return nil, fmt.Errorf("%s: @%s: %v", m.at, m.kind, err)
			}
			m.args = args
			m.src = comment[loc[0] : len(comment)-len(rest)]
			out = append(out, m)
			comment = rest
		}
	}
	return out, nil
}

// commentStart is the index of the '#' that starts the line's YAML comment
// holding a marker, or -1: the first '#' at the line's start or after a
// blank that is followed (in the comment) by an '@'.
func commentStart(line string) int {
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') && markerStart.MatchString(line[i:]) {
			return i
		}
	}
	return -1
}

// parseMarkerArgs reads "arg, arg)" and returns the arguments and the text
// after the closing parenthesis.
func parseMarkerArgs(s string) ([]markerArg, string, error) {
	var args []markerArg
	s = strings.TrimLeft(s, " ")
	if rest, ok := strings.CutPrefix(s, ")"); ok {
		return nil, rest, nil
	}
	for {
		s = strings.TrimLeft(s, " ")
		var a markerArg
		switch {
		case strings.HasPrefix(s, `re"`) || strings.HasPrefix(s, "re`"):
			lit, rest, err := quotedPrefix(s[2:])
			if err != nil {
				return nil, "", err
			}
			re, err := regexp.Compile(lit)
			if err != nil {
				return nil, "", err
			}
			a, s = markerArg{kind: 'r', text: lit, re: re}, rest
		case strings.HasPrefix(s, `"`) || strings.HasPrefix(s, "`"):
			lit, rest, err := quotedPrefix(s)
			if err != nil {
				return nil, "", err
			}
			a, s = markerArg{kind: 's', text: lit}, rest
		default:
			n := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' })
			if n <= 0 {
				return nil, "", fmt.Errorf("bad argument at %q", s)
			}
			a, s = markerArg{kind: 'n', text: s[:n]}, s[n:]
		}
		args = append(args, a)
		s = strings.TrimLeft(s, " ")
		switch {
		case strings.HasPrefix(s, ","):
			s = s[1:]
		case strings.HasPrefix(s, ")"):
			return args, s[1:], nil
		default:
			return nil, "", fmt.Errorf("want , or ) at %q", s)
		}
	}
}

// quotedPrefix unquotes the Go string literal at the start of s.
func quotedPrefix(s string) (string, string, error) {
	lit, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", fmt.Errorf("bad string at %q: %v", s, err)
	}
	v, err := strconv.Unquote(lit)
	return v, s[len(lit):], err
}

// sectionLines maps each section of the archive to the 1-based line of its
// first line of content.
func sectionLines(data []byte) map[string]int {
	out := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if name, ok := strings.CutPrefix(l, "-- "); ok && strings.HasSuffix(name, " --") {
			name = strings.TrimSpace(strings.TrimSuffix(name, " --"))
			if _, seen := out[name]; !seen {
				out[name] = n + 1
			}
		}
	}
	return out
}

// markerSave is one line of a saves.jsonl section.
type markerSave struct {
	File         string `json:"file"`
	Content      string `json:"content"`
	Target       string `json:"target"`
	Conversation string `json:"conversation"`
	State        string `json:"state"`
}

// markerRun is one fixture being run.
type markerRun struct {
	t       *testing.T
	name    string // FIXTURE.txtar
	c       *testClient
	texts   map[string]string // section -> text
	uris    map[string]protocol.DocumentURI
	paths   map[string]string
	opened  map[string]bool
	golden  map[string]string // @NAME -> content
	got     map[string]string // golden answers of this run
	updated bool
	saves   int
}

func runMarkerFixture(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ar := txtar.Parse(data)
	lines := sectionLines(data)
	r := &markerRun{t: t, name: filepath.Base(path), texts: map[string]string{}, uris: map[string]protocol.DocumentURI{},
		paths: map[string]string{}, opened: map[string]bool{}, golden: map[string]string{}, got: map[string]string{}}
	env := newTestEnv(t)
	var markers []*marker
	var agents []string
	var saves, records []byte
	for _, f := range ar.Files {
		switch {
		case strings.HasPrefix(f.Name, "@"):
			r.golden[f.Name[1:]] = string(f.Data)
			continue
		case f.Name == "saves.jsonl":
			saves = f.Data
			continue
		case f.Name == "records.jsonl":
			records = f.Data
			continue
		}
		text := string(f.Data)
		p := env.write(t, f.Name, text)
		r.texts[f.Name], r.uris[f.Name], r.paths[f.Name] = text, pathToURI(p), p
		ms, err := parseMarkers(r.name, f.Name, text, lines[f.Name])
		if err != nil {
			t.Fatal(err)
		}
		markers = append(markers, ms...)
		switch kind, ext := schema.KindOf(f.Name), filepath.Ext(f.Name); {
		case kind == schema.FileWorkspace:
			r.opened[f.Name] = true
		case kind == schema.FileAgent && strings.Contains(f.Name, ".agent.") && (ext == ".yaml" || ext == ".yml" || ext == ".json"):
			r.opened[f.Name] = true
			agents = append(agents, f.Name)
		}
	}
	r.seed(env, agents, saves, records, lines)

	r.c = startServer(t, Options{NoWatch: true, OpenStore: boltOpener(markerServerNow), Now: markerServerNow, Lint: LintEngine(),
		Getenv: func(string) string { return "" }})
	r.c.initialize(env.root, nil, false)
	diags := r.openAll()

	// Diagnostics first: they are complete, so every one must be claimed.
	claimed := map[string][]bool{}
	for name, ds := range diags {
		claimed[name] = make([]bool, len(ds))
	}
	for _, m := range markers {
		if m.kind == "diag" {
			r.diag(m, diags[m.file], claimed[m.file])
		}
	}
	for _, name := range sortedNames(diags) {
		for i, d := range diags[name] {
			if !claimed[name][i] {
				t.Errorf("%s:%d: unexpected diagnostic in %s: %s", r.name, lines[name]+int(d.Range.Start.Line), name, formatDiagnostics([]protocol.Diagnostic{d}))
			}
		}
	}
	lensFiles := map[string][]*marker{}
	for _, m := range markers {
		switch m.kind {
		case "diag":
		case "hover":
			r.hover(m)
		case "inlayhint":
			r.inlayHints(m)
		case "codelens":
			lensFiles[m.file] = append(lensFiles[m.file], m)
		case "symbol":
			r.symbols(m)
		case "complete":
			r.complete(m)
		default:
			t.Errorf("%s: unknown marker @%s", m, m.kind)
		}
	}
	for _, file := range sortedNames(lensFiles) {
		r.codeLenses(file, lensFiles[file], lines[file])
	}
	for _, name := range sortedNames(r.golden) {
		if _, used := r.got[name]; !used && !t.Failed() {
			t.Errorf("%s: section -- @%s -- is used by no marker", r.name, name)
		}
	}
	if *update && r.updated {
		r.rewrite(path, ar)
	}
}

// seed saves and imports the fixture's memories into the workspace's store.
func (r *markerRun) seed(env *testEnv, agents []string, saves, records []byte, lines map[string]int) {
	t := r.t
	for i, l := range strings.Split(string(saves), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		at := fmt.Sprintf("%s:%d", r.name, lines["saves.jsonl"]+i)
		var s markerSave
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		if s.File == "" {
			if len(agents) != 1 {
				t.Fatalf("%s: name the agent file of the save (\"file\")", at)
			}
			s.File = agents[0]
		}
		res := r.save(env, at, s)
		if s.State != "" && string(res.State) != s.State {
			t.Fatalf("%s: save answered state %q, want %q (%+v)", at, res.State, s.State, res)
		}
	}
	if strings.TrimSpace(string(records)) == "" {
		return
	}
	var recs []schema.MemoryRecord
	for i, l := range strings.Split(string(records), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var rec schema.MemoryRecord
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("%s:%d: %v", r.name, lines["records.jsonl"]+i, err)
		}
		recs = append(recs, rec)
	}
	st, err := bolt.Open(env.storePath, store.Options{Now: func() time.Time { return markerEpoch }, LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Import(context.Background(), recs, store.Actor{Kind: store.ActorHuman, Name: "fixture"}); err != nil {
		t.Fatalf("%s: import records.jsonl: %v", r.name, err)
	}
}

// Fixtures run on a fixed clock, so that dates in hints, hovers and
// goldens do not change from day to day: saves are made one second apart
// from markerEpoch, and the server's clock reads an hour later.
var markerEpoch = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func markerServerNow() time.Time { return markerEpoch.Add(time.Hour) }

// save is agentSave on the fixture's clock and workspace config (scope,
// promotion), as the server's own engine is built (server.engine).
func (r *markerRun) save(env *testEnv, at string, s markerSave) engine.SaveResult {
	t := r.t
	_, cfg, _, err := schema.LoadAgent(s.File, []byte(r.texts[s.File]))
	if err != nil || cfg == nil {
		t.Fatalf("%s: load agent %s: %v", at, s.File, err)
	}
	var ws schema.WorkspaceConfig
	if text, ok := r.texts[schema.WorkspaceConfigName]; ok {
		if ws, _, err = schema.ParseWorkspaceConfig(schema.WorkspaceConfigName, []byte(text)); err != nil {
			t.Fatalf("%s: %v", schema.WorkspaceConfigName, err)
		}
	}
	mt, err := schema.ParseTarget(s.Target)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	r.saves++
	now := markerEpoch.Add(time.Duration(r.saves) * time.Second)
	clock := func() time.Time { return now }
	st, err := bolt.Open(env.storePath, store.Options{Now: clock, LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := engine.NewAgent(engine.AgentSpec{Store: st, Workspace: &workspace.Workspace{Config: ws}, Agent: cfg, Scope: ws.Scope, Now: clock})
	res, err := e.Save(context.Background(), engine.SaveRequest{
		Kind: schema.KindFact, Content: s.Content, Target: &mt,
		Provenance: schema.Provenance{ConversationID: s.Conversation, RunID: "run-" + s.Conversation},
		Actor:      store.Actor{Kind: store.ActorAgent, Name: cfg.RoleTemplate.Name},
	})
	if err != nil {
		t.Fatalf("%s: save %q: %v", at, s.Content, err)
	}
	return res
}

// openAll opens the files to open and returns each one's settled
// diagnostics: for an agent file the last publish of version 1 once the
// server has reported the file's store status (which runDiagnostics sends
// after its lint pass); for the workspace config its only publish.
func (r *markerRun) openAll() map[string][]protocol.Diagnostic {
	out := map[string][]protocol.Diagnostic{}
	names := sortedNames(r.opened)
	for _, name := range names {
		r.c.open(r.paths[name], r.texts[name], 1)
	}
	for _, name := range names {
		uri := r.uris[name]
		if schema.KindOf(name) == schema.FileWorkspace {
			out[name] = r.c.awaitDiagnostics(uri, 1).Diagnostics
			continue
		}
		r.c.waitFor("status of "+name, func(ns, _ []note) bool {
			for _, n := range ns {
				var s Status
				if n.method == methodStatus && json.Unmarshal(n.params, &s) == nil && s.URI == uri {
					return true
				}
			}
			return false
		})
		ds := r.c.diagnostics(uri)
		if len(ds) == 0 || ds[len(ds)-1].Version != 1 {
			r.t.Fatalf("%s: status before diagnostics of version 1: %+v", name, ds)
		}
		out[name] = ds[len(ds)-1].Diagnostics
	}
	return out
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (r *markerRun) diag(m *marker, ds []protocol.Diagnostic, claimed []bool) {
	if len(m.args) < 2 || len(m.args) > 3 || m.args[0].kind != 'r' || m.args[1].kind != 's' {
		r.t.Errorf("%s: want @diag(re\"message\", \"code\"[, re\"loc\"])", m)
		return
	}
	col, wantCol := uint32(0), false
	if len(m.args) == 3 {
		p, ok := m.pos(r.t, 2)
		if !ok {
			return
		}
		col, wantCol = p.Character, true
	}
	var onLine []protocol.Diagnostic
	for i, d := range ds {
		if int(d.Range.Start.Line) != m.line {
			continue
		}
		onLine = append(onLine, d)
		if claimed[i] || fmt.Sprint(d.Code) != m.args[1].text || !m.args[0].re.MatchString(d.Message) ||
			(wantCol && d.Range.Start.Character != col) {
			continue
		}
		claimed[i] = true
		return
	}
	want := fmt.Sprintf("a diagnostic [%s] matching %s", m.args[1].text, m.args[0])
	if wantCol {
		want += fmt.Sprintf(" at column %d", col+1)
	}
	r.t.Errorf("%s: no such diagnostic\ngot on line %d:\n%s\nwant %s", m, m.line+1, formatDiagnostics(onLine), want)
}

func (r *markerRun) hover(m *marker) {
	if len(m.args) < 2 {
		r.t.Errorf("%s: want @hover(re\"loc\", re\"want\", ...)", m)
		return
	}
	pos, ok := m.pos(r.t, 0)
	if !ok {
		return
	}
	var h *protocol.Hover
	if err := r.c.callErr(protocol.MethodTextDocumentHover, map[string]any{"textDocument": map[string]any{"uri": r.uris[m.file]}, "position": pos}, &h); err != nil {
		r.t.Errorf("%s: hover at %d:%d: %v", m, pos.Line+1, pos.Character+1, err)
		return
	}
	got := ""
	if h != nil {
		got = h.Contents.Value
	}
	for _, w := range m.args[1:] {
		if w.kind != 'r' {
			r.t.Errorf("%s: hover expectations are regexps, got %s", m, w)
			continue
		}
		if !w.re.MatchString(got) {
			r.t.Errorf("%s: hover at %d:%d does not match %s\ngot:\n%s", m, pos.Line+1, pos.Character+1, w, got)
		}
	}
}

// goldenArg checks that argument i names a golden section.
func (r *markerRun) goldenArg(m *marker, i int) (string, bool) {
	if i >= len(m.args) || m.args[i].kind != 'n' {
		r.t.Errorf("%s: argument %d must name a golden section", m, i+1)
		return "", false
	}
	return m.args[i].text, true
}

// compareGolden compares got with the section @name (or records it under
// -update).
func (r *markerRun) compareGolden(m *marker, name, got string) {
	if prev, dup := r.got[name]; dup && prev != got {
		r.t.Errorf("%s: golden @%s is used twice with different answers", m, name)
	}
	r.got[name] = got
	want, ok := r.golden[name]
	if *update {
		if !ok || want != got {
			r.golden[name], r.updated = got, true
		}
		return
	}
	if !ok {
		r.t.Errorf("%s: no section -- @%s -- (run with -update to create it); got:\n%s", m, name, got)
		return
	}
	if want != got {
		r.t.Errorf("%s: differs from @%s (run with -update to accept); %s\n--- got\n%s--- want\n%s", m, name, firstDifference(got, want), got, want)
	}
}

// firstDifference names the first line where got and want differ.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; ; i++ {
		switch {
		case i >= len(g) && i >= len(w):
			return "no difference"
		case i >= len(g):
			return fmt.Sprintf("line %d is missing: want %q", i+1, w[i])
		case i >= len(w):
			return fmt.Sprintf("line %d is extra: got %q", i+1, g[i])
		case g[i] != w[i]:
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g[i], w[i])
		}
	}
}

func (r *markerRun) inlayHints(m *marker) {
	name, ok := r.goldenArg(m, 0)
	if !ok {
		return
	}
	hs := r.c.hints(r.uris[m.file])
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "%d:%d %s\n", h.Position.Line+1, h.Position.Character+1, h.Label)
	}
	r.compareGolden(m, name, b.String())
}

func (r *markerRun) symbols(m *marker) {
	name, ok := r.goldenArg(m, 0)
	if !ok {
		return
	}
	var syms []protocol.DocumentSymbol
	r.c.call(protocol.MethodTextDocumentDocumentSymbol, map[string]any{"textDocument": map[string]any{"uri": r.uris[m.file]}}, &syms)
	var b strings.Builder
	formatSymbols(&b, syms, 0)
	r.compareGolden(m, name, b.String())
}

func (r *markerRun) complete(m *marker) {
	pos, ok := m.pos(r.t, 0)
	if !ok {
		return
	}
	var list protocol.CompletionList
	r.c.call(protocol.MethodTextDocumentCompletion, map[string]any{"textDocument": map[string]any{"uri": r.uris[m.file]}, "position": pos}, &list)
	if len(m.args) == 2 && m.args[1].kind == 'n' {
		var b strings.Builder
		for _, it := range list.Items {
			nt := ""
			if it.TextEdit != nil {
				nt = it.TextEdit.NewText
			}
			fmt.Fprintf(&b, "%s | %s | %q\n", it.Label, it.Detail, nt)
		}
		r.compareGolden(m, m.args[1].text, b.String())
		return
	}
	var want []string
	for _, a := range m.args[1:] {
		if a.kind != 's' {
			r.t.Errorf("%s: completion labels are strings (or one golden NAME), got %s", m, a)
			return
		}
		want = append(want, a.text)
	}
	if got := labels(list.Items); strings.Join(got, "\n") != strings.Join(want, "\n") {
		r.t.Errorf("%s: completion at %d:%d\ngot  %q\nwant %q", m, pos.Line+1, pos.Character+1, got, want)
	}
}

// codeLenses checks the lenses of file against its @codelens markers: each
// marker claims one lens on its line, and every lens must be claimed.
func (r *markerRun) codeLenses(file string, ms []*marker, first int) {
	var lenses []protocol.CodeLens
	r.c.call(protocol.MethodTextDocumentCodeLens, map[string]any{"textDocument": map[string]any{"uri": r.uris[file]}}, &lenses)
	claimed := make([]bool, len(lenses))
	describe := func(l protocol.CodeLens) string {
		if l.Command == nil {
			return fmt.Sprintf("line %d: (no command)", l.Range.Start.Line+1)
		}
		return fmt.Sprintf("line %d: %q => %s", l.Range.Start.Line+1, l.Command.Title, l.Command.Command)
	}
	for _, m := range ms {
		if len(m.args) < 1 || len(m.args) > 2 || m.args[0].kind != 's' || (len(m.args) == 2 && m.args[1].kind != 's') {
			r.t.Errorf("%s: want @codelens(\"title\"[, \"command\"])", m)
			continue
		}
		found := false
		for i, l := range lenses {
			if claimed[i] || int(l.Range.Start.Line) != m.line || l.Command == nil || l.Command.Title != m.args[0].text ||
				(len(m.args) == 2 && l.Command.Command != m.args[1].text) {
				continue
			}
			claimed[i], found = true, true
			break
		}
		if !found {
			var all []string
			for _, l := range lenses {
				all = append(all, describe(l))
			}
			r.t.Errorf("%s: no such code lens on line %d\ngot:\n  %s", m, m.line+1, strings.Join(all, "\n  "))
		}
	}
	for i, l := range lenses {
		if !claimed[i] {
			r.t.Errorf("%s:%d: unexpected code lens in %s: %s", r.name, first+int(l.Range.Start.Line), file, describe(l))
		}
	}
}

// rewrite writes the archive back with the golden sections of this run.
func (r *markerRun) rewrite(path string, ar *txtar.Archive) {
	have := map[string]bool{}
	for i, f := range ar.Files {
		if name, ok := strings.CutPrefix(f.Name, "@"); ok {
			have[name] = true
			if got, ok := r.got[name]; ok {
				ar.Files[i].Data = []byte(got)
			}
		}
	}
	for _, name := range sortedNames(r.got) {
		if !have[name] {
			ar.Files = append(ar.Files, txtar.File{Name: "@" + name, Data: []byte(r.got[name])})
		}
	}
	if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.t.Logf("updated %s", path)
}
