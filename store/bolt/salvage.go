package bolt

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// Raw page layout of a bbolt file (go.etcd.io/bbolt/internal/common), read
// without bbolt when its B-tree can no longer be walked. Integers are in the
// byte order of the machine that wrote the file; agent-ls stores are local
// files, so the little-endian platforms it runs on are assumed.
const (
	pageHeaderSize    = 16 // id u64, flags u16, count u16, overflow u32
	leafElementSize   = 16 // flags, pos, ksize, vsize: u32 each
	bucketHeaderSize  = 16 // root pgid u64, sequence u64
	leafPageFlag      = 0x02
	bucketLeafFlag    = 0x01
	metaPageSizeField = pageHeaderSize + 8 // after magic u32, version u32
	maxSalvagePage    = 1 << 20
)

// salvageRecords scans every page of the file for leaf elements holding a
// records value (8-byte sequence + record JSON whose id is the key),
// including inline buckets and pages the tree no longer reaches. Copy-on-
// write leaves older versions of a record behind; the one with the latest
// updatedAt (then the higher sequence) wins. Records are returned in id
// order. A record whose own value is lost is rebuilt by replaying the
// ledger entries found (store.ReplayRecords): its write entry's copy with
// the corroborations, invalidation or supersede that followed; a record
// whose delete entry was found stays gone. A salvage may
// resurrect a deleted record: it is a last resort for a file whose tree is
// damaged.
func salvageRecords(f io.ReaderAt, size int64) []schema.MemoryRecord {
	pageSize := int64(os.Getpagesize())
	var hdr [metaPageSizeField + 4]byte
	if _, err := f.ReadAt(hdr[:], 0); err == nil {
		if ps := int64(binary.LittleEndian.Uint32(hdr[metaPageSizeField:])); ps >= 512 && ps <= maxSalvagePage && ps&(ps-1) == 0 {
			pageSize = ps
		}
	}
	best := map[string]salvaged{}
	entries := map[uint64]store.LedgerEntry{}
	buf := make([]byte, pageSize)
	for off := int64(0); off+pageHeaderSize <= size; {
		n, _ := f.ReadAt(buf[:min(pageSize, size-off)], off)
		page := buf[:n]
		step := pageSize
		if len(page) >= pageHeaderSize && binary.LittleEndian.Uint16(page[8:]) == leafPageFlag {
			overflow := int64(binary.LittleEndian.Uint32(page[12:]))
			if overflow > 0 && overflow < (size-off)/pageSize {
				// The page spans overflow more pages: read it whole.
				full := make([]byte, min((overflow+1)*pageSize, size-off))
				m, _ := f.ReadAt(full, off)
				page = full[:m]
				step = (overflow + 1) * pageSize
			}
			scanLeaf(page, best, entries, 0)
		}
		off += step
	}
	out := make([]schema.MemoryRecord, 0, len(best))
	for _, s := range best {
		out = append(out, s.rec)
	}
	chain := make([]store.LedgerEntry, 0, len(entries))
	for _, e := range entries {
		chain = append(chain, e)
	}
	sort.Slice(chain, func(i, j int) bool { return chain[i].Seq < chain[j].Seq })
	for _, r := range store.ReplayRecords(chain, "\uffff") {
		if _, ok := best[r.ID]; !ok {
			if r.Scope == nil {
				r.Scope = map[string]string{}
			}
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

type salvaged struct {
	rec schema.MemoryRecord
	seq uint64
}

// keepLedgerEntry notes a leaf value that decodes as a sealed ledger entry
// stored under its sequence. Entries are never rewritten, so copies of one
// sequence found in stale pages are the same entry.
func keepLedgerEntry(key, val []byte, entries map[uint64]store.LedgerEntry) {
	var e store.LedgerEntry
	if len(key) != 8 || json.Unmarshal(val, &e) != nil || e.Seq != binary.BigEndian.Uint64(key) || e.Hash == "" {
		return
	}
	entries[e.Seq] = e
}

// scanLeaf collects record values from a leaf page, descending into inline
// buckets (bounded depth). Every offset is checked: the page may be garbage.
func scanLeaf(page []byte, best map[string]salvaged, entries map[uint64]store.LedgerEntry, depth int) {
	if len(page) < pageHeaderSize || depth > 8 {
		return
	}
	count := int(binary.LittleEndian.Uint16(page[10:]))
	for i := range count {
		e := pageHeaderSize + i*leafElementSize
		if e+leafElementSize > len(page) {
			return
		}
		flags := binary.LittleEndian.Uint32(page[e:])
		pos := int(binary.LittleEndian.Uint32(page[e+4:]))
		ksize := int(binary.LittleEndian.Uint32(page[e+8:]))
		vsize := int(binary.LittleEndian.Uint32(page[e+12:]))
		k := e + pos
		if pos < 0 || ksize < 0 || vsize < 0 || k < 0 || k+ksize+vsize > len(page) || k+ksize+vsize < k {
			continue
		}
		key, val := page[k:k+ksize], page[k+ksize:k+ksize+vsize]
		if flags&bucketLeafFlag != 0 {
			if len(val) > bucketHeaderSize && binary.LittleEndian.Uint64(val) == 0 {
				scanLeaf(val[bucketHeaderSize:], best, entries, depth+1)
			}
			continue
		}
		if len(val) > 0 && val[0] == '{' {
			keepLedgerEntry(key, val, entries)
			continue
		}
		if len(val) < 8+2 || val[8] != '{' {
			continue
		}
		var r schema.MemoryRecord
		if json.Unmarshal(val[8:], &r) != nil || r.ID == "" || r.ID != string(key) || r.Content == "" {
			continue
		}
		if r.Scope == nil {
			r.Scope = map[string]string{}
		}
		seq := binary.BigEndian.Uint64(val[:8])
		if old, ok := best[r.ID]; ok && (old.rec.UpdatedAt > r.UpdatedAt || (old.rec.UpdatedAt == r.UpdatedAt && old.seq >= seq)) {
			continue
		}
		best[r.ID] = salvaged{rec: r, seq: seq}
	}
}

// salvageFile runs salvageRecords on the store file.
func (s *Store) salvageFile() ([]schema.MemoryRecord, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, fmt.Errorf("salvage %s: %w", s.path, err)
	}
	defer f.Close()
	unlock, err := lockShared(f, s.timeout)
	if err != nil {
		return nil, s.openError(err)
	}
	defer unlock()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("salvage %s: %w", s.path, err)
	}
	return salvageRecords(f, fi.Size()), nil
}
