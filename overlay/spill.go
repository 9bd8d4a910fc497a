package overlay

import "cmp"

// spillLinear is the number of distinct containers a spillIndex searches
// linearly before it builds a map.
const spillLinear = 16

// spillIndex groups spilled records by the container they spill from, in
// two passes over the items (count, then fill exact-size lists), so that
// spilling many records neither hashes a key per record nor regrows the id
// lists. A handful of containers is the common case: they are searched
// linearly.
type spillIndex struct {
	keys     []containerKey
	keyGroup []int // group of keys[i]
	byKey    map[containerKey]int
	groups   []spillGroup
}

// spillGroup is one marker's list: the container pointer and how many ids
// spill from it.
type spillGroup struct {
	ptr string
	n   int
}

// containerOf is the key of the container an item targets.
func containerOf(it *item) containerKey {
	t := it.out.Target
	return containerKey{t.Primitive, cmp.Or(t.Section, t.Slot, t.Capability), it.judgment}
}

// group returns the group of k, or -1.
func (s *spillIndex) group(k containerKey) int {
	if s.byKey != nil {
		if g, ok := s.byKey[k]; ok {
			return g
		}
		return -1
	}
	for i := range s.keys {
		if s.keys[i] == k {
			return s.keyGroup[i]
		}
	}
	return -1
}

// count records that it spills and returns its container's pointer.
func (s *spillIndex) count(it *item) string {
	k := containerOf(it)
	g := s.group(k)
	if g < 0 {
		// Distinct keys naming one container pointer share its list.
		ptr := container(it)
		g = len(s.groups)
		for i := range s.groups {
			if s.groups[i].ptr == ptr {
				g = i
				break
			}
		}
		if g == len(s.groups) {
			s.groups = append(s.groups, spillGroup{ptr: ptr})
		}
		s.keys = append(s.keys, k)
		s.keyGroup = append(s.keyGroup, g)
		if s.byKey != nil {
			s.byKey[k] = g
		} else if len(s.keys) > spillLinear {
			s.byKey = make(map[containerKey]int, 2*len(s.keys))
			for i, k := range s.keys {
				s.byKey[k] = s.keyGroup[i]
			}
		}
	}
	s.groups[g].n++
	it.spill = int32(g)
	return s.groups[g].ptr
}

// lists returns Attribution.Spilled: per container pointer, the ids of its
// spilled items in item order (each counted by count); nil when nothing
// spilled.
func (s *spillIndex) lists(items []item) map[string][]string {
	if len(s.groups) == 0 {
		return nil
	}
	total := 0
	for _, g := range s.groups {
		total += g.n
	}
	// One backing array, cut into each group's exact share.
	all := make([]string, total)
	ids := make([][]string, len(s.groups))
	off := 0
	for i, g := range s.groups {
		ids[i] = all[off : off : off+g.n]
		off += g.n
	}
	for i := range items {
		it := &items[i]
		if it.out.Status != StatusSpilled {
			continue
		}
		ids[it.spill] = append(ids[it.spill], it.rec.ID)
	}
	out := make(map[string][]string, len(s.groups))
	for i, g := range s.groups {
		out[g.ptr] = ids[i]
	}
	return out
}
