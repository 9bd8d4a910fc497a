package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store"
)

// randomHistories drives random mutation sequences (fixed seeds) and checks
// that StateAt at every step's time equals the composition Promoted returned
// then, and that the chain verifies.
func (k kit) randomHistories(t *testing.T) {
	const histories, steps = 12, 30
	targets := []string{"background.projectContext.deploy_window", "judgment.refunds.heuristics", "judgment.deploy.constraints", "recovery", "awareness"}
	for seed := uint64(1); seed <= histories; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			e := k.open(t)
			var ids []string
			var pending []string
			pick := func() string {
				if len(ids) == 0 {
					return "01ARZ3NDEKTSV4RRFFQ69G5FAV"
				}
				return ids[rng.IntN(len(ids))]
			}
			type snap struct {
				at   string
				want []schema.MemoryRecord
			}
			var snaps []snap
			for i := 0; i < steps; i++ {
				var err error
				op := rng.IntN(10)
				switch op {
				case 0, 1, 2: // write, maybe targeted, superseding or expiring
					req := fact(fmt.Sprintf("record %d", i), "project", "p")
					if rng.IntN(3) > 0 {
						req = targeted(req.Content, targets[rng.IntN(len(targets))], "project", "p")
					}
					if rng.IntN(4) == 0 && len(ids) > 0 {
						req.Supersedes = pick()
					}
					if rng.IntN(5) == 0 {
						req.ExpiresAt = schema.FormatTime(e.clock.Now().Add(time.Duration(rng.IntN(4)) * time.Second))
					}
					req.Provenance.ConversationID = fmt.Sprintf("c%d", rng.IntN(3))
					var recs []schema.MemoryRecord
					recs, err = e.s.Write(e.ctx, []store.WriteRequest{req}, Agent)
					if err == nil {
						ids = append(ids, recs[0].ID)
					}
				case 3:
					err = e.s.Invalidate(e.ctx, pick(), "random", Human)
				case 4:
					_, err = e.s.Corroborate(e.ctx, pick(), schema.Support{ConversationID: fmt.Sprintf("c%d", rng.IntN(4))}, Agent)
				case 5:
					tiers := []schema.Tier{schema.TierAuto, schema.TierEarned, schema.TierGuarded}
					_, err = e.s.Promote(e.ctx, pick(), store.PromoteRequest{Tier: tiers[rng.IntN(3)], Actor: System})
				case 6:
					err = e.s.Demote(e.ctx, pick(), "random", Human)
				case 7:
					kinds := []store.ProposalKind{store.ProposePromote, store.ProposeDemote}
					var p store.Proposal
					p, err = e.s.Propose(e.ctx, store.ProposalRequest{Kind: kinds[rng.IntN(2)], RecordID: pick(), RequestedBy: Agent,
						TTL: time.Duration(1+rng.IntN(3)) * time.Second, Invalidate: rng.IntN(2) == 0})
					if err == nil {
						pending = append(pending, p.ID)
					}
				case 8:
					if len(pending) > 0 {
						id := pending[rng.IntN(len(pending))]
						if rng.IntN(3) == 0 {
							_, err = e.s.Reject(e.ctx, id, Human, "random")
						} else {
							_, err = e.s.Approve(e.ctx, id, Human, "random")
						}
					}
				case 9:
					if rng.IntN(3) == 0 {
						err = e.s.Delete(e.ctx, pick(), Human)
					} else {
						_, err = e.s.ExpireProposals(e.ctx)
					}
				}
				if err != nil && !errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrNotFound) &&
					!errors.Is(err, store.ErrInvalid) && !errors.Is(err, store.ErrForbidden) {
					t.Fatalf("step %d (op %d): untyped error %v", i, op, err)
				}
				now := e.now()
				cur := snap{now, sortedByID(e.promoted(nil, ""))}
				if n := len(snaps); n > 0 && snaps[n-1].at == now {
					snaps[n-1] = cur // StateAt(T) sees every entry at T
				} else {
					snaps = append(snaps, cur)
				}
				if rng.IntN(3) > 0 {
					e.clock.Advance(time.Duration(rng.IntN(1500)) * time.Millisecond)
				}
			}
			for i, s := range snaps {
				got, err := e.s.StateAt(e.ctx, s.at)
				if err != nil {
					t.Fatalf("StateAt(%s): %v", s.at, err)
				}
				if !sameRecords(got, s.want) {
					t.Fatalf("snapshot %d: StateAt(%s) =\n%v\nlive Promoted was\n%v", i, s.at, recsJSON(got), recsJSON(s.want))
				}
			}
			if err := e.s.Verify(e.ctx); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}
}
