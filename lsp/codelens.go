package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/agent-ls/agent-ls/store"
)

// CommandShowProposals is a client-side command that code lenses name to
// open the pending reviews of an agent (agent-ls/proposals); the server
// does not execute it.
const CommandShowProposals = "agent-ls.showProposals"

// sectionCounts are the memory lines of one authored section.
type sectionCounts struct {
	learned, candidates, pending int
}

func (c sectionCounts) title() string {
	var parts []string
	if c.learned > 0 {
		parts = append(parts, fmt.Sprintf("%d learned", c.learned))
	}
	if c.candidates > 0 {
		parts = append(parts, fmt.Sprintf("%d candidate%s", c.candidates, plural(c.candidates)))
	}
	if c.pending > 0 {
		parts = append(parts, fmt.Sprintf("%d pending review%s", c.pending, plural(c.pending)))
	}
	return strings.Join(parts, " · ")
}

// CodeLens answers textDocument/codeLens with one lens above each section
// memories compile into: "2 learned · 1 candidate · 1 pending review".
// Clicking opens the pending reviews when there are some, else the composed
// prompt. A file with schema errors or no store has no lenses.
func (s *server) CodeLens(ctx context.Context, p *protocol.CodeLensParams) ([]protocol.CodeLens, error) {
	releaseQueue(ctx)
	out := []protocol.CodeLens{}
	f, err := s.loadAgentFile(p.TextDocument.URI)
	if err != nil || f.agent == nil {
		return out, nil
	}
	v, err := s.memoryView(ctx, f)
	if err != nil || v == nil {
		return out, nil
	}
	pendingRecords := map[string]bool{}
	counts := map[string]*sectionCounts{}
	at := func(container string) *sectionCounts {
		if counts[container] == nil {
			counts[container] = &sectionCounts{}
		}
		return counts[container]
	}
	_ = s.withStore(ctx, f, false, func(st store.Tx) error {
		ps, err := st.Proposals(ctx, store.ProposalFilter{State: store.ProposalPending, Scope: f.ws.Config.Scope, Agent: f.agent.RoleTemplate.Name})
		if err != nil {
			return err
		}
		for _, pr := range ps {
			rec, err := st.Get(ctx, pr.RecordID)
			if err != nil {
				continue
			}
			pendingRecords[rec.ID] = true
			at(containerOf(f.agent, "", rec.Target)).pending++
		}
		return nil
	})
	for _, ml := range v.lines {
		switch {
		case pendingRecords[ml.rec.ID]:
		case ml.kind() == "candidate":
			at(ml.container).candidates++
		default:
			at(ml.container).learned++
		}
	}
	// One lens per line: containers that anchor on the same line (a
	// learned slot the file does not author anchors on its nearest
	// authored ancestor) add up, so the lens counts every line learned
	// there. It opens the first of those sections.
	type lensAt struct {
		section string
		sectionCounts
	}
	containers := make([]string, 0, len(counts))
	for c := range counts {
		if c != "" {
			containers = append(containers, c)
		}
	}
	sort.Strings(containers)
	byLine := map[int]*lensAt{}
	var lines []int
	for _, c := range containers {
		n := counts[c]
		line := anchorLine(f.doc, c)
		l := byLine[line]
		if l == nil {
			l = &lensAt{section: c}
			byLine[line] = l
			lines = append(lines, line)
		}
		l.learned += n.learned
		l.candidates += n.candidates
		l.pending += n.pending
	}
	sort.Ints(lines)
	for _, line := range lines {
		n := byLine[line]
		cmd := &protocol.Command{Title: n.title(), Command: CommandShowComposedPrompt,
			Arguments: []any{map[string]any{"uri": f.uri, "section": n.section}}}
		if n.pending > 0 {
			cmd.Command = CommandShowProposals
			cmd.Arguments = []any{map[string]any{"uri": f.uri}}
		}
		pos := protocol.Position{Line: uint32(line)}
		out = append(out, protocol.CodeLens{Range: protocol.Range{Start: pos, End: pos}, Command: cmd})
	}
	return out, nil
}

// methodCodeLensRefresh asks the client to re-request code lenses (3.16).
const methodCodeLensRefresh = "workspace/codeLens/refresh"

// codeLensRefreshSupport reads workspace.codeLens.refreshSupport from
// initialize's raw params.
func codeLensRefreshSupport(raw json.RawMessage) bool {
	var p struct {
		Capabilities struct {
			Workspace struct {
				CodeLens struct {
					RefreshSupport bool `json:"refreshSupport"`
				} `json:"codeLens"`
			} `json:"workspace"`
		} `json:"capabilities"`
	}
	return json.Unmarshal(raw, &p) == nil && p.Capabilities.Workspace.CodeLens.RefreshSupport
}

// refreshCodeLenses asks the client to re-request code lenses after the
// store changed, when it supports that.
func (s *server) refreshCodeLenses(ctx context.Context) {
	s.mu.Lock()
	ok := s.lensRefresh
	s.mu.Unlock()
	if !ok {
		return
	}
	if err := protocol.Call(ctx, s.conn, methodCodeLensRefresh, nil, nil); err != nil && ctx.Err() == nil {
		s.log.Debug("code lens refresh", "err", err)
	}
}
