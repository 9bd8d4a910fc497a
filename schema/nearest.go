package schema

import "strings"

// NearestName is the one name of names nearest to s by edit distance (case
// ignored), within a third of s's length (at least 2); false when none is
// near enough or two are equally near. The language server's "change key"
// quick fix and the command line's "did you mean" both use it.
func NearestName(s string, names []string) (string, bool) {
	best, bestDist, ties := "", -1, 0
	for _, n := range names {
		dist := EditDistance(strings.ToLower(s), strings.ToLower(n))
		switch {
		case bestDist < 0 || dist < bestDist:
			best, bestDist, ties = n, dist, 1
		case dist == bestDist && n != best:
			ties++
		}
	}
	if ties != 1 || bestDist > max(2, len(s)/3) {
		return "", false
	}
	return best, true
}

// EditDistance is the Levenshtein distance of a and b, in runes.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// SuggestKey is the valid key nearest to the unknown key at ptr in d (a
// file of kind k): the schema's properties of its parent that the parent
// does not already hold, by NearestName. It is the language server's "change
// key" quick fix and the command line's "did you mean".
func SuggestKey(d *Document, k FileKind, ptr string) (string, bool) {
	parent := ParentPointer(ptr)
	present := map[string]bool{}
	for _, c := range d.Children(parent) {
		present[lastToken(c)] = true
	}
	var names []string
	for _, pr := range SchemaDocFor(k).Properties(parent) {
		if !present[pr.Name] {
			names = append(names, pr.Name)
		}
	}
	return NearestName(lastToken(ptr), names)
}
