package store_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/memstore"
)

// TestReadOnlyRefusesEveryWrite calls every method of store.Tx that is not
// a read on store.ReadOnly's Tx: each must fail with ErrForbidden and leave
// the store as it was.
func TestReadOnlyRefusesEveryWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ms := memstore.New(store.Options{})
	defer ms.Close()
	tx := store.ReadOnly(ms)
	reads := map[string]bool{}
	for m := range reflect.TypeFor[store.Reader]().Methods() {
		reads[m.Name] = true
	}
	v := reflect.ValueOf(tx)
	n := 0
	for m := range reflect.TypeFor[store.Tx]().Methods() {
		if reads[m.Name] {
			continue
		}
		fn := v.MethodByName(m.Name)
		args := make([]reflect.Value, fn.Type().NumIn())
		args[0] = reflect.ValueOf(ctx)
		for i := 1; i < len(args); i++ {
			args[i] = reflect.Zero(fn.Type().In(i))
		}
		out := fn.Call(args)
		err, _ := out[len(out)-1].Interface().(error)
		if !errors.Is(err, store.ErrForbidden) {
			t.Errorf("ReadOnly(...).%s = %v, want ErrForbidden", m.Name, err)
		}
		n++
	}
	if n < 15 {
		t.Errorf("checked %d writes, want the Writer half and Update", n)
	}
	l, err := ms.Ledger(ctx, store.LedgerFilter{})
	if err != nil || len(l) != 0 {
		t.Errorf("ledger after the refused writes: %d entries, %v", len(l), err)
	}
}
