package bolt

import (
	"context"
	"io"

	bbolt "go.etcd.io/bbolt"
)

// WriteSnapshot writes a consistent copy of the whole store file to w: one
// read transaction's view (bbolt's Tx.WriteTo), so writers in this and other
// processes may run before and after it and the copy holds exactly the
// commits before the transaction began. It returns the bytes written.
func (s *Store) WriteSnapshot(ctx context.Context, w io.Writer) (int64, error) {
	var n int64
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}
