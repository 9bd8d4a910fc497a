package store

import (
	"slices"
	"sort"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
)

// Stored is a record with its write sequence: a per-store counter that grows
// with every record created (written or imported), so "later write first"
// breaks createdAt ties deterministically.
type Stored struct {
	Rec schema.MemoryRecord
	Seq uint64
}

// EffectiveLimit resolves Query.Limit: nil is DefaultLimit, a negative value
// (Unlimited) means no limit and is returned as -1, 0 means nothing.
func EffectiveLimit(l *int) int {
	if l == nil {
		return DefaultLimit
	}
	if *l < 0 {
		return Unlimited
	}
	return *l
}

// NextChange is the first time after now at which a record of recs
// expires or is invalidated (its ExpiresAt or InvalidAt), "" when none
// does: until then a read of them at now reads the same. A cache of what
// was read from them holds until it.
func NextChange(now string, recs ...[]schema.MemoryRecord) string {
	until := ""
	for _, rs := range recs {
		for i := range rs {
			until = NextChangeOf(now, until, &rs[i])
		}
	}
	return until
}

// NextChangeOf is until, or r's expiry or invalidation when that comes
// after now and before until ("" is none): NextChange one record at a time.
func NextChangeOf(now, until string, r *schema.MemoryRecord) string {
	for _, t := range []string{r.ExpiresAt, r.InvalidAt} {
		if t != "" && t > now && (until == "" || t < until) {
			until = t
		}
	}
	return until
}

// Match reports whether rec passes every filter of q except the text query:
// scope subset match, kinds (any of), tags (all of), target equality,
// TargetedOnly, validity. Expired records (ExpiresAt <= now) match only
// with IncludeExpired, invalidated ones only with IncludeInvalidated.
func Match(rec *schema.MemoryRecord, q Query, now string) bool {
	if !q.IncludeExpired && rec.ExpiresAt != "" && rec.ExpiresAt <= now {
		return false
	}
	if !q.IncludeInvalidated && rec.InvalidAt != "" && rec.InvalidAt <= now {
		return false
	}
	if !MatchScope(rec.Scope, q.Scope) {
		return false
	}
	if len(q.Kinds) > 0 && !slices.Contains(q.Kinds, rec.Kind) {
		return false
	}
	for _, t := range q.Tags {
		if !slices.Contains(rec.Tags, t) {
			return false
		}
	}
	if q.TargetedOnly && rec.Target == nil {
		return false
	}
	if q.Target != nil && (rec.Target == nil || *rec.Target != *q.Target) {
		return false
	}
	if len(q.Targets) > 0 && (rec.Target == nil || !slices.Contains(q.Targets, *rec.Target)) {
		return false
	}
	return true
}

// TextScore returns how many distinct query tokens the record's content and
// tags contain. Query tokens are deduplicated, so "dark dark" scores like
// "dark".
func TextScore(rec *schema.MemoryRecord, queryTokens []string) int {
	have := tokenSet(append([]string{rec.Content}, rec.Tags...)...)
	n := 0
	for _, t := range queryTokens {
		if have[t] {
			n++
		}
	}
	return n
}

// Rank is the search semantics every backend applies to its candidates
// (which may be a superset of the matches; Rank filters them with Match).
//
// Without text (empty after trimming spaces), matches are ordered newest
// first: createdAt descending, ties broken by the later write (higher Seq)
// first. With text, the query is tokenized with Tokenize and OR-matched: a
// record matches when it contains at least one distinct query token (in its
// content or tags); records with more matching tokens rank first, then
// newest first as above. A non-blank text that yields no tokens (e.g. "?!")
// matches nothing. The result is cut to EffectiveLimit(q.Limit).
func Rank(cands []Stored, q Query, now string) []schema.MemoryRecord {
	limit := EffectiveLimit(q.Limit)
	if limit == 0 {
		return nil
	}
	text := strings.TrimSpace(q.Text)
	var qtoks []string
	if text != "" {
		qtoks = dedupe(Tokenize(text))
		if len(qtoks) == 0 {
			return nil
		}
	}
	type hit struct {
		s     *Stored
		score int
	}
	hits := make([]hit, 0, len(cands))
	for i := range cands {
		s := &cands[i]
		if !Match(&s.Rec, q, now) {
			continue
		}
		score := 0
		if qtoks != nil {
			if score = TextScore(&s.Rec, qtoks); score == 0 {
				continue
			}
		}
		hits = append(hits, hit{s, score})
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return Newer(hits[i].s, hits[j].s)
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]schema.MemoryRecord, len(hits))
	for i, h := range hits {
		out[i] = h.s.Rec
	}
	return out
}

// SortNewest orders stored records newest first (createdAt descending, then
// higher Seq first), the listing order of Search without text and of
// Candidates.
func SortNewest(s []Stored) {
	sort.SliceStable(s, func(i, j int) bool { return Newer(&s[i], &s[j]) })
}

// Newer reports whether a lists before b in SortNewest's order.
func Newer(a, b *Stored) bool {
	if a.Rec.CreatedAt != b.Rec.CreatedAt {
		return a.Rec.CreatedAt > b.Rec.CreatedAt
	}
	return a.Seq > b.Seq
}

func dedupe(toks []string) []string {
	seen := map[string]bool{}
	out := toks[:0:0]
	for _, t := range toks {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
