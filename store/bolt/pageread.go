package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// A bounded read — the few keys under one prefix of one bucket — answered
// from the file with pread instead of bbolt's mapping. Opening a database
// maps the whole file, and each page a read then touches costs a page fault
// and, in a big file, a page table of its own, built and torn down with
// the mapping: with a million records that was most of a Promoted call
// (docs/PERFORMANCE.md). The reader follows bbolt's own walk (the meta page
// bbolt would pick, its branch search, its cursor's next) over pages it
// checks as pagecheck.go does, so it never panics on hostile bytes. It reads
// at most a budget of pages; a caller falls back to bbolt when the budget
// is spent or the tree is not what the reader expects (errPageTree), so a
// damaged file gets bbolt's answer and its errors, as before.

// errPageTree is the reader declining: the tree is not one it answers for
// (a check failed, or the page budget is spent).
var errPageTree = errors.New("page reader declined")

// pageTree reads pages of one bbolt file through f, each once (a lookup of
// two buckets reads the root bucket's page once).
type pageTree struct {
	f      io.ReaderAt
	meta   boltMeta
	budget int // page visits it may still make
	read   map[uint64][]byte
}

// openPageTree reads the meta page bbolt would use for the file f of size
// bytes; at most budget page visits follow.
func openPageTree(f io.ReaderAt, size int64, budget int) (*pageTree, error) {
	m, err := chooseMeta(f, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errPageTree, err)
	}
	return &pageTree{f: f, meta: m, budget: budget}, nil
}

// treeRoot is where a bucket's tree starts: a page, or the inline page
// held in its parent's value.
type treeRoot struct {
	page   uint64
	inline []byte
}

// root is the root bucket's tree.
func (t *pageTree) root() treeRoot { return treeRoot{page: t.meta.root} }

// page reads a branch or leaf page in a buffer of its own (the keys and
// values the caller keeps point into it), or gives the one read before.
func (t *pageTree) page(id uint64) ([]byte, error) {
	// Every visit counts against the budget, a page read before too: the
	// budget bounds the walk's work, not only its reads.
	if t.budget <= 0 {
		return nil, fmt.Errorf("%w: page budget spent", errPageTree)
	}
	t.budget--
	if p, ok := t.read[id]; ok {
		return p, nil
	}
	p, err := pageAt(t.f, nil, t.meta.pageSize, t.meta.pgid, id, 0, branchPageFlag, leafPageFlag)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errPageTree, err)
	}
	if t.read == nil {
		t.read = map[uint64][]byte{}
	}
	t.read[id] = p
	return p, nil
}

// treeFrame is one page on a cursor's path and the element it is at.
type treeFrame struct {
	page   []byte
	branch bool
	count  int
	end    int // where the element table ends
	index  int
}

func newFrame(page []byte) (treeFrame, error) {
	if len(page) < pageHeaderSize {
		return treeFrame{}, fmt.Errorf("%w: short page", errPageTree)
	}
	flags := binary.LittleEndian.Uint16(page[8:])
	if flags != branchPageFlag && flags != leafPageFlag {
		return treeFrame{}, fmt.Errorf("%w: flags %#x", errPageTree, flags)
	}
	branch := flags == branchPageFlag
	size := leafElementSize
	if branch {
		size = branchElementSize
	}
	count, end, err := elements(page, size)
	if err != nil {
		return treeFrame{}, fmt.Errorf("%w: %v", errPageTree, err)
	}
	if branch && count == 0 {
		return treeFrame{}, fmt.Errorf("%w: branch page without elements", errPageTree)
	}
	return treeFrame{page: page, branch: branch, count: count, end: end}, nil
}

// key returns element i's key.
func (fr *treeFrame) key(i int) ([]byte, error) {
	if fr.branch {
		e := pageHeaderSize + i*branchElementSize
		k, ok := span(fr.page, e, fr.end, binary.LittleEndian.Uint32(fr.page[e:]), binary.LittleEndian.Uint32(fr.page[e+4:]))
		if !ok {
			return nil, fmt.Errorf("%w: element %d: key outside the page", errPageTree, i)
		}
		return k, nil
	}
	k, _, _, err := fr.leaf(i)
	return k, err
}

// leaf returns leaf element i's key, value and flags.
func (fr *treeFrame) leaf(i int) (k, v []byte, flags uint32, err error) {
	e := pageHeaderSize + i*leafElementSize
	flags = binary.LittleEndian.Uint32(fr.page[e:])
	pos := binary.LittleEndian.Uint32(fr.page[e+4:])
	ksize := binary.LittleEndian.Uint32(fr.page[e+8:])
	vsize := binary.LittleEndian.Uint32(fr.page[e+12:])
	kv, ok := span(fr.page, e, fr.end, pos, ksize+vsize)
	if !ok || ksize+vsize < ksize {
		return nil, nil, 0, fmt.Errorf("%w: element %d: key and value outside the page", errPageTree, i)
	}
	return kv[:ksize:ksize], kv[ksize:], flags, nil
}

// child returns branch element i's page.
func (fr *treeFrame) child(i int) uint64 {
	return binary.LittleEndian.Uint64(fr.page[pageHeaderSize+i*branchElementSize+8:])
}

// pageCursor walks one bucket's tree in key order, as bbolt's Cursor does.
type pageCursor struct {
	t     *pageTree
	stack []treeFrame
}

// frameOf reads the page a root or a child names.
func (c *pageCursor) frameOf(id uint64) (treeFrame, error) {
	if len(c.stack) >= maxPageTreeDepth {
		return treeFrame{}, fmt.Errorf("%w: tree deeper than %d", errPageTree, maxPageTreeDepth)
	}
	p, err := c.t.page(id)
	if err != nil {
		return treeFrame{}, err
	}
	return newFrame(p)
}

// seek moves to the first key at or after key and returns it (nil k at the
// end of the bucket).
func (c *pageCursor) seek(root treeRoot, key []byte) (k, v []byte, flags uint32, err error) {
	c.stack = c.stack[:0]
	var fr treeFrame
	if root.inline != nil {
		fr, err = newFrame(root.inline)
		if err == nil && fr.branch {
			err = fmt.Errorf("%w: inline bucket is not a leaf", errPageTree)
		}
	} else {
		fr, err = c.frameOf(root.page)
	}
	for err == nil {
		var ferr error
		// The first element whose key is not below key (bbolt's search).
		i := sort.Search(fr.count, func(i int) bool {
			ki, e := fr.key(i)
			if e != nil {
				ferr = e
				return true
			}
			return bytes.Compare(ki, key) >= 0
		})
		if ferr != nil {
			return nil, nil, 0, ferr
		}
		if !fr.branch {
			fr.index = i
			c.stack = append(c.stack, fr)
			if i >= fr.count {
				return c.next()
			}
			return fr.leaf(i)
		}
		// A branch: the child whose range holds key.
		if i == fr.count {
			i--
		} else if ki, _ := fr.key(i); !bytes.Equal(ki, key) && i > 0 {
			i--
		}
		fr.index = i
		c.stack = append(c.stack, fr)
		fr, err = c.frameOf(fr.child(i))
	}
	return nil, nil, 0, err
}

// next moves to the following key (nil k at the end of the bucket).
func (c *pageCursor) next() (k, v []byte, flags uint32, err error) {
	for {
		i := len(c.stack) - 1
		for ; i >= 0 && c.stack[i].index >= c.stack[i].count-1; i-- {
		}
		if i < 0 {
			if n := len(c.stack); n > 0 {
				c.stack[n-1].index = c.stack[n-1].count
			}
			return nil, nil, 0, nil
		}
		c.stack[i].index++
		c.stack = c.stack[:i+1]
		for top := &c.stack[len(c.stack)-1]; top.branch; top = &c.stack[len(c.stack)-1] {
			fr, err := c.frameOf(top.child(top.index))
			if err != nil {
				return nil, nil, 0, err
			}
			c.stack = append(c.stack, fr)
		}
		if top := &c.stack[len(c.stack)-1]; top.count > 0 {
			return top.leaf(top.index)
		}
		// An empty leaf: bbolt skips it too.
	}
}

// bucket returns the tree of the bucket name inside the tree at parent;
// found is false when there is none.
func (t *pageTree) bucket(parent treeRoot, name []byte) (root treeRoot, found bool, err error) {
	c := pageCursor{t: t}
	k, v, flags, err := c.seek(parent, name)
	if err != nil || !bytes.Equal(k, name) || flags&bucketLeafFlag == 0 {
		return treeRoot{}, false, err
	}
	if len(v) < bucketHeaderSize {
		return treeRoot{}, false, fmt.Errorf("%w: bucket %q: value of %d bytes", errPageTree, name, len(v))
	}
	if id := binary.LittleEndian.Uint64(v); id != 0 {
		return treeRoot{page: id}, true, nil
	}
	return treeRoot{inline: v[bucketHeaderSize:]}, true, nil
}

// get returns the value of key in the tree at root, nil when there is none.
func (t *pageTree) get(root treeRoot, key []byte) ([]byte, error) {
	c := pageCursor{t: t}
	k, v, flags, err := c.seek(root, key)
	if err != nil || !bytes.Equal(k, key) || flags&bucketLeafFlag != 0 {
		return nil, err
	}
	return v, nil
}

// scanPrefix calls fn with each key under prefix in the tree at root, in
// order, and its value; nested buckets are skipped as bbolt's ForEach
// gives them with a nil value.
func (t *pageTree) scanPrefix(root treeRoot, prefix []byte, fn func(k, v []byte)) error {
	c := pageCursor{t: t}
	k, v, flags, err := c.seek(root, prefix)
	for ; err == nil && k != nil && bytes.HasPrefix(k, prefix); k, v, flags, err = c.next() {
		if flags&bucketLeafFlag == 0 {
			fn(k, v)
		}
	}
	return err
}

// preadBudget is how many pages a bounded read reads with pread before it
// leaves the rest to bbolt: past a few dozen pages, mapping the file and
// faulting pages in (16 at a time) costs less than a system call per page.
const preadBudget = 48

// scanPages reads the keys under prefix in bucket of the file with pread
// (pageTree) and calls fn with each, in key order; the keys and values stay
// valid after it returns. It holds the shared file lock, as a bbolt read
// does. ok is false when it could not answer — a transaction in progress on
// s, a store whose version is not Version, a page it declines, more than
// preadBudget pages — and the caller then reads with bbolt; fn may have been
// called before. A missing file, a lock timeout or a refused path are
// errors, as bbolt's open would report them.
func (s *Store) scanPages(ctx context.Context, bucket, prefix []byte, fn func(k, v []byte)) (ok bool, err error) {
	if s.tx != nil {
		return false, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.readable(ctx); err != nil {
		return false, err
	}
	f, err := opener(ctx, false, s.timeout)(s.path, os.O_RDONLY, 0)
	if err != nil {
		return false, s.openError(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("store %s: %w", s.path, err)
	}
	t, err := openPageTree(f, fi.Size(), preadBudget)
	if err != nil {
		return false, nil
	}
	meta, found, err := t.bucket(t.root(), bucketMeta)
	if err != nil || !found {
		return false, nil
	}
	if v, err := t.get(meta, keyVersion); err != nil || len(v) != 8 || binary.BigEndian.Uint64(v) != Version {
		return false, nil
	}
	b, found, err := t.bucket(t.root(), bucket)
	if err != nil {
		return false, nil
	}
	if !found {
		return true, nil
	}
	if err := t.scanPrefix(b, prefix, fn); err != nil {
		return false, nil
	}
	return true, nil
}
