package evolve

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agent-ls/agent-ls/evolve/lexical"
	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// MergeFragments is the text of one entry holding both fragments: keep
// whole, then each clause of frag that says something keep does not (a
// content word keep lacks), joined with "; ". A clause of frag whose
// content words keep already holds adds nothing and is left out; nothing
// of keep is ever left out. Garden proposes it; the human may edit it on
// approval.
func MergeFragments(keep, frag string) string {
	keep = strings.TrimSpace(keep)
	have := map[string]bool{}
	for _, t := range lexical.Tokens(keep) {
		have[t] = true
	}
	var add []string
	for _, clause := range clauses(frag) {
		news := false
		for _, t := range lexical.Tokens(clause) {
			if !have[t] {
				news = true
				have[t] = true
			}
		}
		if news {
			add = append(add, clause)
		}
	}
	if len(add) == 0 {
		return keep
	}
	out := strings.TrimRight(keep, ".;, ")
	for _, c := range add {
		out += "; " + lowerFirst(c)
	}
	if strings.HasSuffix(keep, ".") {
		out += "."
	}
	return out
}

// clauses splits s at clause punctuation and at " and " / " then ",
// trimming each piece; empty pieces are dropped.
func clauses(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(";,.:!?\n", r) }) {
		for _, sep := range []string{" and ", " then "} {
			part = strings.ReplaceAll(part, sep, "\x00")
		}
		for _, c := range strings.Split(part, "\x00") {
			if c = strings.TrimSpace(c); c != "" {
				out = append(out, c)
			}
		}
	}
	return out
}

// lowerFirst lowercases s's first letter unless the word is an acronym
// (its second letter upper case too).
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsUpper(r) {
		return s
	}
	if r2, _ := utf8.DecodeRuneInString(s[n:]); unicode.IsUpper(r2) {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

// merge carries out an approved merge proposal p (its MergedContent set):
// one new record with content (the proposal's text, or the human's edit)
// on the keeper's slot supersedes the keeper, carries the supports of both
// fragments and is promoted; the proposal's own approval then retires the
// other fragment. Nothing else is rewritten. It runs inside decide's
// transaction.
func (e *Engine) merge(ctx context.Context, o Outcome, p store.Proposal, actor store.Actor, reason, content string) (Outcome, error) {
	keep, err := e.get(ctx, p.SupersededBy)
	if err != nil {
		return refused(o, "merge %s: the record it merges into, %s, is gone: %v", p.ID, p.SupersededBy, err)
	}
	frag, err := e.get(ctx, p.RecordID)
	if err != nil {
		return o, err
	}
	now := e.nowString()
	for _, r := range []*schema.MemoryRecord{&keep, &frag} {
		if r.InvalidAt != "" && r.InvalidAt <= now {
			return refused(o, "merge %s: %s was invalidated since the proposal; nothing to merge", p.ID, r.ID)
		}
	}
	if keep.Target == nil || frag.Target == nil || keep.Target.String() != frag.Target.String() {
		return refused(o, "merge %s: %s and %s no longer share a slot", p.ID, keep.ID, frag.ID)
	}
	content = strings.TrimSpace(content)
	if content == "" {
		return refused(o, "merge %s: the merged text is empty", p.ID)
	}
	prov := schema.Provenance{ConversationID: keep.Provenance.ConversationID, RunID: keep.Provenance.RunID}
	// The workspace's limits hold for a merged text as for a saved one (the
	// store checks the rest: bidi controls, identifiers).
	if err := store.CheckLimits(e.ws.Limits, &schema.MemoryRecord{Content: content, Scope: keep.Scope, Tags: keep.Tags, Provenance: prov}); err != nil {
		return refused(o, "merge %s: the merged text: %v", p.ID, err)
	}
	recs, err := e.st.Write(ctx, []store.WriteRequest{{Scope: keep.Scope, Kind: keep.Kind, Content: content, Tags: keep.Tags,
		Provenance: prov, Target: keep.Target, Supersedes: keep.ID}}, actor)
	if err != nil {
		return o, fmt.Errorf("merge %s: write the merged record: %w", p.ID, err)
	}
	merged := recs[0]
	// The merged record carries the union of both fragments' evidence: the
	// conversation each was learned in and each support (a conversation
	// counts once; Corroborate counts a repeat once).
	for _, r := range []schema.MemoryRecord{keep, frag} {
		evidence := r.Supports
		if r.ID == frag.ID && r.Provenance.ConversationID != "" {
			evidence = append([]schema.Support{{ConversationID: r.Provenance.ConversationID, RunID: r.Provenance.RunID, At: r.CreatedAt}}, evidence...)
		}
		for _, s := range evidence {
			if _, err := e.st.Corroborate(ctx, merged.ID, s, actor); err != nil {
				return o, fmt.Errorf("merge %s: supports of %s: %w", p.ID, r.ID, err)
			}
		}
	}
	if _, err := e.st.Promote(ctx, merged.ID, store.PromoteRequest{Tier: p.Tier, Actor: actor, Approver: actor.String(), Evidence: p.Evidence}); err != nil {
		return o, fmt.Errorf("merge %s: promote the merged record: %w", p.ID, err)
	}
	if _, err := e.st.Approve(ctx, p.ID, actor, reason); err != nil {
		return o, fmt.Errorf("approve proposal %s: %w", p.ID, err)
	}
	o.Status, o.RecordID = StatusApproved, merged.ID
	o.Reason = fmt.Sprintf("merge of %s into %s approved by %s: %s holds both (supersedes %s)", frag.ID, keep.ID, actor, merged.ID, keep.ID)
	return o, nil
}
