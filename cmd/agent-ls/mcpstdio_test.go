package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Issue 31, reproductions 1-3: the built `agent-ls mcp` driven over raw
// stdio, one JSON-RPC message a line, as a runtime (or an attacker) writes
// them.

const (
	mcpInitLine        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	mcpInitializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// rpcAnswer is one message the server wrote.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// parseAnswers splits the server's stdout into messages; a line that is
// not a JSON object (a batch answer is an array) is kept whole in raw.
func parseAnswers(t *testing.T, stdout string) (answers []rpcAnswer, raw []string) {
	t.Helper()
	for line := range strings.Lines(stdout) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var a rpcAnswer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			raw = append(raw, line)
			continue
		}
		answers = append(answers, a)
	}
	return answers, raw
}

// answerFor is the answer whose id is id ("null" for id null), nil when
// none is.
func answerFor(answers []rpcAnswer, id string) *rpcAnswer {
	for i := range answers {
		got := string(answers[i].ID)
		if got == "" {
			got = "null"
		}
		if got == id {
			return &answers[i]
		}
	}
	return nil
}

// nestedTags is a tools/call of memory_save whose tags nest depth arrays.
func nestedTags(id, depth int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_save","arguments":{"content":"deep","tags":%s"x"%s}}}`,
		id, strings.Repeat("[", depth), strings.Repeat("]", depth))
}

// TestMCPBadLineKeepsServing (issue 31, reproduction 1): every line that is
// not a JSON-RPC message is answered with a JSON-RPC error (-32700 for one
// that is not JSON, id null; -32600 for one that is not a request, with its
// id when it names one) and the server answers the requests after it; at
// the end of input it exits 0.
func TestMCPBadLineKeepsServing(t *testing.T) {
	t.Parallel()
	dir, _ := mcpWorkspace(t)
	deep := nestedTags(8, 1001)
	if len(deep) < 2000 || len(deep) > 3000 {
		t.Fatalf("the nested call is %d bytes, want about 2.4 KB", len(deep))
	}
	bad := []struct {
		name, line string
		id         string // the id the error answer carries
		code       int
		msg        string // in the error message
	}{
		{"garbage", "garbage", "null", -32700, "not JSON"},
		{"truncated", `{"jsonrpc":"2.0","id":4,"method":`, "null", -32700, "not JSON"},
		{"two values", `{"jsonrpc":"2.0","id":30,"method":"ping"} {}`, "null", -32700, "not JSON"},
		{"number", `42`, "null", -32600, "not a JSON-RPC message"},
		{"string", `"tools/list"`, "null", -32600, "not a JSON-RPC message"},
		{"null", `null`, "null", -32600, "not a JSON-RPC message"},
		{"empty batch", `[]`, "null", -32600, "batch"},
		{"wrong version", `{"jsonrpc":"1.0","id":5,"method":"tools/list"}`, "5", -32600, `"jsonrpc"`},
		{"no version", `{"id":6,"method":"tools/list"}`, "6", -32600, `"jsonrpc"`},
		{"version in another case", `{"JSONRPC":"2.0","id":7,"method":"tools/list"}`, "7", -32600, `"jsonrpc"`},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, "null", -32600, `"id"`},
		{"huge id", `{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}`, "null", -32600, `"id"`},
		{"method not a string", `{"jsonrpc":"2.0","id":9,"method":5}`, "9", -32600, `"method"`},
		{"neither request nor response", `{"jsonrpc":"2.0"}`, "null", -32600, "not a JSON-RPC message"},
		{"error not an object", `{"jsonrpc":"2.0","id":10,"method":"tools/list","error":5}`, "10", -32600, "not a JSON-RPC message"},
		{"duplicate member", `{"jsonrpc":"2.0","id":11,"method":"tools/list","method":"ping"}`, "11", -32600, `"method" twice`},
		{"1,001 nested arrays", deep, "8", -32600, "nests deeper than 100"},
	}
	lines := []string{mcpInitLine, mcpInitializedLine}
	for _, b := range bad {
		lines = append(lines, b.line)
	}
	lines = append(lines,
		`[{"jsonrpc":"2.0","id":20,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	r := runBin(t, dir, strings.Join(lines, "\n")+"\n", nil, "mcp", "--agent", "support.agent.yaml")
	answers, raw := parseAnswers(t, r.stdout)
	if r.code != exitOK {
		t.Errorf("exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if a := answerFor(answers, "3"); a == nil || a.Error != nil || !strings.Contains(string(a.Result), "memory_save") {
		t.Errorf("tools/list (id 3) after the bad lines: %+v; stdout:\n%s\nstderr:\n%s", a, r.stdout, r.stderr)
	}
	// The errors come in the order of the lines.
	var errs []rpcAnswer
	for _, a := range answers {
		if a.Error != nil && string(a.ID) != "1" && string(a.ID) != "3" {
			errs = append(errs, a)
		}
	}
	if len(errs) != len(bad) {
		t.Fatalf("%d error answers for %d bad lines:\n%s", len(errs), len(bad), r.stdout)
	}
	for i, b := range bad {
		a := errs[i]
		id := string(a.ID)
		if id == "" {
			id = "null"
		}
		if id != b.id || a.Error.Code != b.code || !strings.Contains(a.Error.Message, b.msg) {
			t.Errorf("%s: answered id %s, %d %q; want id %s, %d naming %q", b.name, id, a.Error.Code, a.Error.Message, b.id, b.code, b.msg)
		}
	}
	// A batch (MCP 2025-06-18 removed them) gets an array of one error per
	// request in it, with the request's id.
	if len(raw) != 1 || !strings.Contains(raw[0], `"id":20`) || !strings.Contains(raw[0], "-32600") || strings.Contains(raw[0], "memory_save") {
		t.Errorf("the batch: answers %q; want one array with id 20's -32600", raw)
	}
}

// TestMCPAnswersEveryRequestBeforeEOF (issue 31, reproduction 2): input that
// ends right after its requests gets every answer before the server exits,
// run after run (the SDK alone cancels what it has not handled at EOF).
func TestMCPAnswersEveryRequestBeforeEOF(t *testing.T) {
	t.Parallel()
	dir, _ := mcpWorkspace(t)
	input := strings.Join([]string{mcpInitLine, mcpInitializedLine,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_list","arguments":{}}}`,
	}, "\n") + "\n"
	const runs = 50
	failed := 0
	for i := range runs {
		r := runBin(t, dir, input, nil, "mcp", "--agent", "support.agent.yaml")
		answers, _ := parseAnswers(t, r.stdout)
		ok := r.code == exitOK && !strings.Contains(r.stderr, "before initialize")
		for _, id := range []string{"1", "2", "3"} {
			if a := answerFor(answers, id); a == nil || a.Error != nil {
				ok = false
			}
		}
		if !ok {
			failed++
			if failed <= 3 {
				t.Errorf("run %d: exit %d, stdout:\n%s\nstderr:\n%s", i, r.code, r.stdout, r.stderr)
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d runs lost an answer", failed, runs)
	}
}

// mcpPipe is a running `agent-ls mcp` whose stdio the test holds.
type mcpPipe struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex
	byID   map[string]rpcAnswer
	cond   *sync.Cond
	done   bool
	stderr bytes.Buffer
}

func startMCPPipe(t *testing.T, dir string, args ...string) *mcpPipe {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	p := &mcpPipe{byID: map[string]rpcAnswer{}}
	p.cond = sync.NewCond(&p.mu)
	p.cmd = exec.CommandContext(ctx, agentLSBin, append([]string{"mcp"}, args...)...)
	p.cmd.Dir = dir
	p.cmd.Stderr = &p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var a rpcAnswer
			if json.Unmarshal(sc.Bytes(), &a) == nil {
				p.mu.Lock()
				p.byID[string(a.ID)] = a
				p.cond.Broadcast()
				p.mu.Unlock()
			}
		}
		p.mu.Lock()
		p.done = true
		p.cond.Broadcast()
		p.mu.Unlock()
	}()
	return p
}

func (p *mcpPipe) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatalf("write to agent-ls mcp: %v", err)
	}
}

// wait blocks until n answers have arrived or the server's stdout ends.
func (p *mcpPipe) wait(n int) map[string]rpcAnswer {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.byID) < n && !p.done {
		p.cond.Wait()
	}
	return p.byID
}

// TestMCPManySavesQueue (issue 31, reproduction 3): 150 memory_save calls
// sent without waiting to one server all succeed (calls of one process
// queue for the store; none is told another process holds it), the store
// holds exactly what they wrote, and its ledger verifies.
func TestMCPManySavesQueue(t *testing.T) {
	t.Parallel()
	dir, _ := mcpWorkspace(t)
	p := startMCPPipe(t, dir, "--agent", "support.agent.yaml")
	p.send(t, mcpInitLine)
	p.wait(1)
	p.send(t, mcpInitializedLine)
	// 75 lessons, each from two conversations: 75 records with one support
	// each, whichever of a pair lands first.
	const lessons = 75
	var input strings.Builder
	for i := range 2 * lessons {
		args := map[string]any{"kind": "fact", "content": lessonText(i % lessons), "target": "judgment.refunds.heuristics"}
		msg := map[string]any{"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": map[string]any{
			"_meta": map[string]any{"agent-ls/conversationId": fmt.Sprintf("conv-%d", i/lessons)},
			"name":  "memory_save", "arguments": args}}
		data, err := json.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		input.Write(data)
		input.WriteByte('\n')
	}
	p.send(t, strings.TrimSuffix(input.String(), "\n"))
	got := p.wait(1 + 2*lessons)
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("agent-ls mcp: %v; stderr:\n%s", err, p.stderr.String())
	}
	saved, corroborated, locked := 0, 0, 0
	ids := map[string]bool{}
	for i := range 2 * lessons {
		a, ok := got[fmt.Sprint(100+i)]
		if !ok || a.Error != nil {
			t.Errorf("save %d: %+v", i, a)
			continue
		}
		var res struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Status       string `json:"status"`
				ID           string `json:"id"`
				Corroborated bool   `json:"corroborated"`
			} `json:"structuredContent"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(a.Result, &res); err != nil {
			t.Fatal(err)
		}
		if res.IsError || res.StructuredContent.Status != "saved" {
			if strings.Contains(string(a.Result), "store locked") {
				locked++
			}
			if locked <= 1 {
				t.Errorf("save %d: %s", i, a.Result)
			}
			continue
		}
		saved++
		ids[res.StructuredContent.ID] = true
		if res.StructuredContent.Corroborated {
			corroborated++
		}
	}
	if saved != 2*lessons || corroborated != lessons || len(ids) != lessons {
		t.Errorf("%d of %d saves succeeded (%d told the store was locked), %d corroborated, %d records; want %d, %d, %d",
			saved, 2*lessons, locked, corroborated, len(ids), 2*lessons, lessons, lessons)
	}
	r := runBin(t, dir, "", nil, "memory", "list", "--format", "json", "--scope", "project=atlas", "--limit", "-1")
	var list struct {
		Records []struct {
			ID       string            `json:"id"`
			Supports []json.RawMessage `json:"supports"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("memory list: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	recs := list.Records
	supports := 0
	for _, rec := range recs {
		if len(rec.Supports) != 1 {
			t.Errorf("record %s has %d supports, want 1", rec.ID, len(rec.Supports))
		}
		supports += len(rec.Supports)
	}
	if len(recs) != lessons || supports != lessons {
		t.Errorf("the store holds %d records with %d supports; want %d and %d", len(recs), supports, lessons, lessons)
	}
	if r := runBin(t, dir, "", nil, "memory", "ledger", "--verify"); r.code != exitOK {
		t.Errorf("ledger --verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// lessonText is lesson i, sharing no word with any other lesson.
func lessonText(i int) string {
	w := func(k int) string {
		b := []byte("zq")
		n := i*4 + k
		for range 3 {
			b = append(b, byte('a'+n%26))
			n /= 26
		}
		return string(b)
	}
	return fmt.Sprintf("Refunds %s %s %s %s", w(0), w(1), w(2), w(3))
}
