package schema

import (
	"bytes"
	"slices"
)

// SameLayout reports whether o has d's nodes at d's positions and d's
// suppression comments: the same text up to the end of d's last node, no
// node after it, and the same suppressions on lines of the same range. It
// holds for an edit after the last node (a comment appended) and is what
// lets a caller that also knows the two values equal reuse a result that
// depends only on the values, the nodes' ranges and the suppressions (a
// lint pass). It is conservative: an edit that shifts any offset before
// the last node's end gives false.
func (d *Document) SameLayout(o *Document) bool {
	if d == nil || o == nil || d.root == nil || o.root == nil {
		return false
	}
	if d.filename != o.filename || d.extent != o.extent || d.rootRng != o.rootRng || len(d.nodes) != len(o.nodes) ||
		d.extent > len(d.src) || d.extent > len(o.src) || !bytes.Equal(d.src[:d.extent], o.src[:o.extent]) {
		return false
	}
	if !slices.Equal(d.supps, o.supps) {
		return false
	}
	for _, s := range d.supps {
		if d.LineRange(s.Line) != o.LineRange(s.Line) {
			return false
		}
	}
	return true
}
