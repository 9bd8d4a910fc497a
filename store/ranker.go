package store

import (
	"container/heap"
	"sort"
	"strings"

	"github.com/agent-ls/agent-ls/schema"
)

// Ranker is Rank over candidates offered one at a time. With a bounded
// limit it keeps only the limit best seen so far (a heap), so a search of a
// large store holds limit records instead of every candidate; unbounded, it
// keeps every candidate and ranks them at the end. Result is exactly Rank of
// every offered candidate in the order offered (equal ranks keep that
// order, as Rank's stable sort does).
type Ranker struct {
	q     Query
	now   string
	limit int
	qtoks []string
	none  bool // the query has text without tokens: nothing matches
	all   []Stored
	kept  rankHeap
	n     int
}

// NewRanker returns a Ranker for q at time now.
func NewRanker(q Query, now string) *Ranker {
	r := &Ranker{q: q, now: now, limit: EffectiveLimit(q.Limit)}
	if text := strings.TrimSpace(q.Text); text != "" {
		r.qtoks = dedupe(Tokenize(text))
		r.none = len(r.qtoks) == 0
	}
	return r
}

// Offer hands the Ranker one candidate.
func (r *Ranker) Offer(s Stored) {
	if r.limit == 0 || r.none {
		return
	}
	if r.limit < 0 {
		r.all = append(r.all, s)
		return
	}
	if !Match(&s.Rec, r.q, r.now) {
		return
	}
	score := 0
	if r.qtoks != nil {
		if score = TextScore(&s.Rec, r.qtoks); score == 0 {
			return
		}
	}
	h := rankHit{s: s, score: score, order: r.n}
	r.n++
	if len(r.kept) < r.limit {
		heap.Push(&r.kept, h)
		return
	}
	if rankBefore(&h, &r.kept[0]) {
		r.kept[0] = h
		heap.Fix(&r.kept, 0)
	}
}

// Result is Rank of every candidate offered.
func (r *Ranker) Result() []schema.MemoryRecord {
	if r.limit < 0 {
		return Rank(r.all, r.q, r.now)
	}
	if r.limit == 0 || r.none {
		return nil
	}
	hits := []rankHit(r.kept)
	sort.Slice(hits, func(i, j int) bool { return rankBefore(&hits[i], &hits[j]) })
	out := make([]schema.MemoryRecord, len(hits))
	for i := range hits {
		out[i] = hits[i].s.Rec
	}
	return out
}

type rankHit struct {
	s     Stored
	score int
	order int
}

// rankBefore is Rank's order: a higher score first, then the newer, then
// the one offered first.
func rankBefore(a, b *rankHit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if Newer(&a.s, &b.s) {
		return true
	}
	if Newer(&b.s, &a.s) {
		return false
	}
	return a.order < b.order
}

// rankHeap keeps the worst kept hit on top.
type rankHeap []rankHit

func (h rankHeap) Len() int           { return len(h) }
func (h rankHeap) Less(i, j int) bool { return rankBefore(&h[j], &h[i]) }
func (h rankHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rankHeap) Push(x any)        { *h = append(*h, x.(rankHit)) }
func (h *rankHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
