//go:build !linux

package bolt

import bbolt "go.etcd.io/bbolt"

// trimMapping does nothing here: see trim_linux.go.
func trimMapping(*bbolt.Tx) (stop func()) { return func() {} }

// pager does nothing here: see trim_linux.go.
type pager struct{}

func newPager(*bbolt.Tx) pager { return pager{} }

// mappingPager does nothing here: see trim_linux.go.
func mappingPager([]byte) pager { return pager{} }

func (*pager) step() {}
