package memstore_test

import (
	"strings"
	"testing"

	"github.com/agent-ls/agent-ls/store"
	"github.com/agent-ls/agent-ls/store/memstore"
	"github.com/agent-ls/agent-ls/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, opts store.Options) store.Store {
		return memstore.New(opts)
	})
}

// TestTamper runs the kit's cases of content edited behind the ledger.
func TestTamper(t *testing.T) {
	storetest.RunTamper(t, func(t *testing.T, opts store.Options) store.Store { return memstore.New(opts) }, storetest.Tamper{
		DropPromotion: func(t *testing.T, s store.Store, id string) {
			s.(*memstore.Store).EditBehindLedger(func(_ map[string]*store.Stored, proms map[string]store.Promotion, _ map[string]store.Proposal) {
				delete(proms, id)
			})
		},
		EditContent: func(t *testing.T, s store.Store, id, from, to string) {
			s.(*memstore.Store).EditBehindLedger(func(recs map[string]*store.Stored, _ map[string]store.Promotion, _ map[string]store.Proposal) {
				recs[id].Rec.Content = strings.Replace(recs[id].Rec.Content, from, to, 1)
			})
		},
		EditProposalState: func(t *testing.T, s store.Store, id string, state store.ProposalState) {
			s.(*memstore.Store).EditBehindLedger(func(_ map[string]*store.Stored, _ map[string]store.Promotion, props map[string]store.Proposal) {
				p := props[id]
				p.State = state
				props[id] = p
			})
		},
	})
}
