package bolt

import (
	"os"
	"testing"
)

// BenchmarkCheckPages times checkPages on the file named by
// AGENT_LS_PAGECHECK_FILE (e.g. a bench/gen store), or on a store of 2,000
// records.
func BenchmarkCheckPages(b *testing.B) {
	path := os.Getenv("AGENT_LS_PAGECHECK_FILE")
	if path == "" {
		path, _ = goodDB(b, 2000)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	r, unmap := mapFile(f, fi.Size())
	defer unmap()
	for b.Loop() {
		if err := checkPages(r, fi.Size()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckTree times what a write pays: Store.checkTree opens, maps
// and checks the file.
func BenchmarkCheckTree(b *testing.B) {
	path := os.Getenv("AGENT_LS_PAGECHECK_FILE")
	if path == "" {
		path, _ = goodDB(b, 2000)
	}
	s := &Store{path: path}
	for b.Loop() {
		s.checked = nil // what the first write of a handle pays
		if err := s.checkTree(); err != nil {
			b.Fatal(err)
		}
	}
}
