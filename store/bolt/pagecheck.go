package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
)

// The structural check of a bbolt file's page tree, done by our own code
// before the first write of every read-write transaction (update): bbolt
// itself reads only the pages an operation touches, so damage in other data
// pages would go unnoticed and the write would build on it. bbolt's
// tx.Check panics inside its own goroutine on garbage pages, so it is not
// used. Reads do not run the check: they already degrade by skipping
// undecodable records, and a fault on a page they do read is recovered as
// store.ErrCorrupt (withDB).
//
// The layout (go.etcd.io/bbolt/internal/common), besides salvage.go's
// constants: a meta page holds, after the page header, magic u32, version
// u32, page size u32, flags u32, root bucket (root pgid u64, sequence u64),
// freelist pgid u64, high water mark pgid u64, txid u64 and an FNV-64a
// checksum of the fields before it.
const (
	branchPageFlag     = 0x01
	metaPageFlag       = 0x04
	freelistPageFlag   = 0x10
	branchElementSize  = 16 // pos u32, ksize u32, pgid u64
	boltMagic          = 0xED0CDAED
	boltVersion        = 2
	metaSize           = 64 // meta fields, checksum included
	metaChecksummed    = 56 // bytes of meta the checksum covers
	noFreelist         = ^uint64(0)
	maxPageTreeDepth   = 64
	freelistCountSplit = 0xFFFF // count field saying the real count is the first u64
)

// boltMeta is the part of a meta page the check needs.
type boltMeta struct {
	pageSize int64
	root     uint64
	freelist uint64
	pgid     uint64 // high water mark: pages [0, pgid) are in use
	txid     uint64
}

// readMeta decodes and validates the meta page at off.
func readMeta(f io.ReaderAt, off int64) (boltMeta, error) {
	var buf [pageHeaderSize + metaSize]byte
	if n, _ := f.ReadAt(buf[:], off); n < len(buf) {
		return boltMeta{}, fmt.Errorf("meta page at offset %d: short read", off)
	}
	if binary.LittleEndian.Uint16(buf[8:]) != metaPageFlag {
		return boltMeta{}, fmt.Errorf("meta page at offset %d: flags %#x are not a meta page's", off, binary.LittleEndian.Uint16(buf[8:]))
	}
	m := buf[pageHeaderSize:]
	if binary.LittleEndian.Uint32(m) != boltMagic || binary.LittleEndian.Uint32(m[4:]) != boltVersion {
		return boltMeta{}, fmt.Errorf("meta page at offset %d: bad magic or version", off)
	}
	h := fnv.New64a()
	_, _ = h.Write(m[:metaChecksummed])
	if h.Sum64() != binary.LittleEndian.Uint64(m[metaChecksummed:]) {
		return boltMeta{}, fmt.Errorf("meta page at offset %d: checksum mismatch", off)
	}
	return boltMeta{
		pageSize: int64(binary.LittleEndian.Uint32(m[8:])),
		root:     binary.LittleEndian.Uint64(m[16:]),
		freelist: binary.LittleEndian.Uint64(m[32:]),
		pgid:     binary.LittleEndian.Uint64(m[40:]),
		txid:     binary.LittleEndian.Uint64(m[48:]),
	}, nil
}

// pageChecker walks one file's page tree.
type pageChecker struct {
	f        io.ReaderAt
	pageSize int64
	pgid     uint64   // high water mark
	seen     []uint64 // bitset of pages reached (tree and freelist)
	buf      []byte
}

// checkPages checks the page tree of the bbolt file f of size bytes, as
// bbolt would read it (the valid meta page with the higher txid): every
// page reached from the root bucket — branch and leaf pages, the trees of
// nested buckets, inline buckets and overflow — has its own id, a known
// flag, a count whose elements fit the page, element keys and values
// inside the page, keys in strictly ascending order, and lies below the
// high water mark and within the file; no page is reached twice; the
// freelist names pages in range that the tree does not use. It never
// panics and reads each page at most once, whatever the bytes. The error
// names the page ("page 123: ...").
func checkPages(f io.ReaderAt, size int64) error {
	m, err := chooseMeta(f, size)
	if err != nil {
		return err
	}
	c := &pageChecker{f: f, pageSize: m.pageSize, pgid: m.pgid, seen: make([]uint64, (m.pgid+63)/64)}
	c.mark(0, 0) // the meta pages
	c.mark(1, 0)
	if err := c.tree(m.root, 0, 0); err != nil {
		return err
	}
	if m.freelist != noFreelist {
		return c.checkFreelist(m.freelist)
	}
	return nil
}

// chooseMeta returns the meta page bbolt would use for the file f of size
// bytes: the valid one with the higher txid. Its page size is valid and its
// high water mark lies within the file.
func chooseMeta(f io.ReaderAt, size int64) (boltMeta, error) {
	m0, err0 := readMeta(f, 0)
	ps := m0.pageSize
	if err0 != nil || !validPageSize(ps) {
		ps = int64(4096)
		var hdr [metaPageSizeField + 4]byte
		// bbolt falls back to the second meta page at the default size.
		if n, _ := f.ReadAt(hdr[:], ps); n == len(hdr) {
			if v := int64(binary.LittleEndian.Uint32(hdr[metaPageSizeField:])); validPageSize(v) {
				ps = v
			}
		}
	}
	m1, err1 := readMeta(f, ps)
	m := m0
	switch {
	case err0 != nil && err1 != nil:
		return boltMeta{}, fmt.Errorf("no valid meta page: %v; %v", err0, err1)
	case err0 != nil, err1 == nil && m1.txid > m0.txid:
		m = m1
	}
	if !validPageSize(m.pageSize) {
		return boltMeta{}, fmt.Errorf("meta page: page size %d", m.pageSize)
	}
	filePages := uint64(size / m.pageSize)
	if m.pgid < 3 || m.pgid > filePages {
		return boltMeta{}, fmt.Errorf("meta page: high water mark of %d pages, the file holds %d", m.pgid, filePages)
	}
	return m, nil
}

func validPageSize(ps int64) bool {
	return ps >= 512 && ps <= maxSalvagePage && ps&(ps-1) == 0
}

// mark notes pages id..id+overflow as reached; false if one already was.
func (c *pageChecker) mark(id, overflow uint64) bool {
	ok := true
	for p := id; p <= id+overflow; p++ {
		w, b := p/64, uint64(1)<<(p%64)
		if c.seen[w]&b != 0 {
			ok = false
		}
		c.seen[w] |= b
	}
	return ok
}

// readPage reads page id with its overflow into c.buf (pageAt), once: a
// page reached before is an error.
func (c *pageChecker) readPage(id uint64, from pageRef, want, orWant uint16) ([]byte, error) {
	page, err := pageAt(c.f, c.buf, c.pageSize, c.pgid, id, from, want, orWant)
	if err != nil {
		return nil, err
	}
	c.buf = page[:cap(page)]
	if !c.mark(id, uint64(binary.LittleEndian.Uint32(page[12:]))) {
		return nil, fmt.Errorf("page %d (%s): reached twice", id, from)
	}
	return page, nil
}

// pageAt reads page id of f with its overflow, into buf when it is big
// enough, after checking its header: its own id, flags one of want, all of
// it below the high water mark pgid. from names where the id came from.
func pageAt(f io.ReaderAt, buf []byte, pageSize int64, pgid, id uint64, from pageRef, want, orWant uint16) ([]byte, error) {
	if id < 2 || id >= pgid {
		return nil, fmt.Errorf("page %d (%s): outside the file's pages [2, %d)", id, from, pgid)
	}
	if int64(cap(buf)) < pageSize {
		buf = make([]byte, pageSize)
	}
	off := int64(id) * pageSize
	page := buf[:pageSize]
	if n, _ := f.ReadAt(page, off); n < len(page) {
		return nil, fmt.Errorf("page %d (%s): past the end of the file", id, from)
	}
	if got := binary.LittleEndian.Uint64(page); got != id {
		return nil, fmt.Errorf("page %d (%s): header says page %d", id, from, got)
	}
	if flags := binary.LittleEndian.Uint16(page[8:]); flags != want && flags != orWant {
		return nil, fmt.Errorf("page %d (%s): flags %#x, want %#x", id, from, flags, want|orWant)
	}
	overflow := uint64(binary.LittleEndian.Uint32(page[12:]))
	if id+overflow >= pgid {
		return nil, fmt.Errorf("page %d (%s): overflow of %d pages runs past the file's %d pages", id, from, overflow, pgid)
	}
	if overflow == 0 {
		return page, nil
	}
	n := int64(overflow+1) * pageSize
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
		copy(buf, page)
	}
	page = buf[:n]
	if got, _ := f.ReadAt(page[pageSize:], off+pageSize); int64(got) < n-pageSize {
		return nil, fmt.Errorf("page %d (%s): past the end of the file", id, from)
	}
	return page, nil
}

// pageRef names where a page id was found: the page holding it, or 0 for
// the meta page.
type pageRef uint64

func (r pageRef) String() string {
	if r == 0 {
		return "from the meta page"
	}
	return fmt.Sprintf("from page %d", uint64(r))
}

// tree checks the B-tree rooted at page id.
func (c *pageChecker) tree(id uint64, depth int, from pageRef) error {
	if depth > maxPageTreeDepth {
		return fmt.Errorf("page %d (%s): tree deeper than %d", id, from, maxPageTreeDepth)
	}
	page, err := c.readPage(id, from, branchPageFlag, leafPageFlag)
	if err != nil {
		return err
	}
	// Children are read after this page is checked: readPage reuses c.buf.
	var children []uint64
	if binary.LittleEndian.Uint16(page[8:]) == branchPageFlag {
		children, err = branchChildren(page)
	} else {
		children, err = checkLeaf(page, false)
	}
	if err != nil {
		return fmt.Errorf("page %d (%s): %w", id, from, err)
	}
	for _, child := range children {
		if err := c.tree(child, depth+1, pageRef(id)); err != nil {
			return err
		}
	}
	return nil
}

// elements checks that count elements of size elemSize fit the page and
// returns the offset where the element table ends.
func elements(page []byte, elemSize int) (count, end int, err error) {
	count = int(binary.LittleEndian.Uint16(page[10:]))
	end = pageHeaderSize + count*elemSize
	if end > len(page) {
		return 0, 0, fmt.Errorf("%d elements do not fit a page of %d bytes", count, len(page))
	}
	return count, end, nil
}

// span returns page[e+pos : e+pos+n] if it lies between the element table's
// end and the page's end.
func span(page []byte, e, end int, pos, n uint32) ([]byte, bool) {
	start := uint64(e) + uint64(pos)
	stop := start + uint64(n)
	if start < uint64(end) || stop > uint64(len(page)) {
		return nil, false
	}
	return page[start:stop], true
}

// branchChildren checks a branch page's elements and returns its children.
func branchChildren(page []byte) ([]uint64, error) {
	count, end, err := elements(page, branchElementSize)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, fmt.Errorf("branch page without elements")
	}
	children := make([]uint64, 0, count)
	var prev []byte
	for i := range count {
		e := pageHeaderSize + i*branchElementSize
		key, ok := span(page, e, end, binary.LittleEndian.Uint32(page[e:]), binary.LittleEndian.Uint32(page[e+4:]))
		if !ok {
			return nil, fmt.Errorf("element %d: key outside the page", i)
		}
		if i > 0 && bytes.Compare(prev, key) >= 0 {
			return nil, fmt.Errorf("element %d: keys out of order", i)
		}
		prev = key
		children = append(children, binary.LittleEndian.Uint64(page[e+8:]))
	}
	return children, nil
}

// checkLeaf checks a leaf page's elements, and the inline buckets among
// them, and returns the root pages of the nested buckets it holds.
func checkLeaf(page []byte, inline bool) ([]uint64, error) {
	count, end, err := elements(page, leafElementSize)
	if err != nil {
		return nil, err
	}
	var roots []uint64
	var prev []byte
	for i := range count {
		e := pageHeaderSize + i*leafElementSize
		flags := binary.LittleEndian.Uint32(page[e:])
		pos := binary.LittleEndian.Uint32(page[e+4:])
		ksize := binary.LittleEndian.Uint32(page[e+8:])
		vsize := binary.LittleEndian.Uint32(page[e+12:])
		kv, ok := span(page, e, end, pos, ksize+vsize)
		if !ok || ksize+vsize < ksize {
			return nil, fmt.Errorf("element %d: key and value outside the page", i)
		}
		key, val := kv[:ksize], kv[ksize:]
		if i > 0 && bytes.Compare(prev, key) >= 0 {
			return nil, fmt.Errorf("element %d: keys out of order", i)
		}
		prev = key
		switch flags {
		case 0:
		case bucketLeafFlag:
			if inline {
				return nil, fmt.Errorf("element %d: a bucket inside an inline bucket", i)
			}
			if len(val) < bucketHeaderSize {
				return nil, fmt.Errorf("element %d: bucket %q: value of %d bytes", i, key, len(val))
			}
			if root := binary.LittleEndian.Uint64(val); root != 0 {
				roots = append(roots, root)
				continue
			}
			p := val[bucketHeaderSize:]
			if len(p) < pageHeaderSize || binary.LittleEndian.Uint16(p[8:]) != leafPageFlag {
				return nil, fmt.Errorf("element %d: inline bucket %q is not a leaf", i, key)
			}
			if _, err := checkLeaf(p, true); err != nil {
				return nil, fmt.Errorf("element %d: inline bucket %q: %w", i, key, err)
			}
		default:
			return nil, fmt.Errorf("element %d: flags %#x", i, flags)
		}
	}
	return roots, nil
}

// checkFreelist checks the freelist page and that the pages it names are in
// range and not in the tree.
func (c *pageChecker) checkFreelist(id uint64) error {
	page, err := c.readPage(id, 0, freelistPageFlag, freelistPageFlag)
	if err != nil {
		return err
	}
	count := uint64(binary.LittleEndian.Uint16(page[10:]))
	idx := uint64(pageHeaderSize)
	if count == freelistCountSplit {
		if len(page) < pageHeaderSize+8 {
			return fmt.Errorf("page %d (the freelist): no count", id)
		}
		count = binary.LittleEndian.Uint64(page[pageHeaderSize:])
		idx += 8
	}
	if count > uint64(len(page)) || idx+count*8 > uint64(len(page)) {
		return fmt.Errorf("page %d (the freelist): %d free ids do not fit", id, count)
	}
	for i := range count {
		free := binary.LittleEndian.Uint64(page[idx+i*8:])
		if free < 2 || free >= c.pgid {
			return fmt.Errorf("page %d (the freelist): free page %d outside the file's pages [2, %d)", id, free, c.pgid)
		}
		if !c.mark(free, 0) {
			return fmt.Errorf("page %d (the freelist): free page %d is in use or listed twice", id, free)
		}
	}
	return nil
}
