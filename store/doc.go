// Package store defines the memory-store protocol every backend implements
// (ADR-0007 records plus ADR-0008 promotion state and ledger), its typed
// errors, the agent-key convention, and the pure helpers that pin the
// protocol's semantics so every backend behaves alike. Backends live in
// sub-packages (store/bolt, store/memstore); store/storetest is the
// conformance kit that checks the rules below.
//
// # Records
//
// Write takes a batch all-or-nothing with one now: every request passes
// ValidateWrite, ids are minted by the store (schema.IDGenerator, batch
// order), createdAt = updatedAt = now, provenance.at defaults to now and
// provenance.author to the actor ("kind:name"); NewRecord builds the stored
// shape. An empty batch writes nothing. Supersedes must name a record that
// existed before the batch (ErrNotFound otherwise, also when it names a
// record of the same batch), that is still valid (ErrConflict) and that no
// other item of the batch supersedes (ErrConflict); the old record gets
// invalidAt = now, supersededBy and the reason "superseded by ID"
// (ApplySupersede) in the same transaction. Any failure writes nothing.
//
// Get returns invalidated and expired records. Invalidate of an unknown id
// is ErrNotFound; invalidating an invalid record is a no-op (no ledger
// entry). Delete is for humans only (MayDelete): any other actor gets
// ErrForbidden; it removes the record and its promotion row.
//
// # Search
//
// Rank is the search: scope is a subset match (the empty filter matches
// all), kinds any-of, tags all-of, Target equality, TargetedOnly,
// PromotedOnly (the backend keeps only records with a promotion row); records
// invalid at now are left out unless IncludeInvalidated; records expired at
// now (expiresAt <= now) only with IncludeExpired. Text is tokenized by Tokenize
// (lowercase, Latin accents folded, split on every non letter/digit rune
// including the apostrophe, so "user's" is "user" "s"; no stopword removal,
// no stemming, no prefix match) and OR-matched over content and tags; more
// distinct matching tokens rank first. Ties, and listings without text, are
// newest first: createdAt descending, then the later write (higher write
// sequence, see Stored) first. Text that yields no tokens matches nothing.
// Limit: nil is DefaultLimit (10), 0 returns nothing, Unlimited all.
//
// # Transactions
//
// The protocol is bbolt's shape: Store.View(fn) runs fn with a Reader on
// one consistent snapshot (a write through it is ErrForbidden), Update(fn)
// with a Tx whose operations are one all-or-nothing transaction: committed
// together when fn returns nil and no operation failed, none of them
// otherwise (TxGuard remembers a failed mutation). Reader holds the reads,
// Writer the state changes, Tx both plus Update (nested, it joins the
// transaction). Each Reader or Writer method called on the Store itself is
// a transaction of its own. Ledger entries are exactly those of the same
// operations one by one. fn must use the Reader or Tx it is given, not the
// store itself (the store is locked while fn runs). A backend's Tx may
// implement Stamper (optional): the stamp of the state a transaction starts
// from and of the state its commit leaves, so callers can keep derived state
// across transactions and know when anyone else committed in between.
//
// # Promotion
//
// Corroborate needs a conversation id (ErrInvalid) and appends a support
// (at defaults to now) only when its conversation has not taught the record
// yet (neither its provenance nor an earlier support): then it reports
// counted and is ledgered; otherwise it changes nothing. Promote records a
// row (tier, actor, approver, evidence) on a valid record (CheckPromote:
// ErrConflict for invalid records, ErrForbidden for tier locked); promoting
// again replaces the row. Demote removes the row; demoting an unpromoted
// record is a no-op, an unknown one ErrNotFound. Promoted(scope, agent) and
// Candidates apply AgentFilter, keep records valid at now, and list newest
// first; Candidates are targeted and unpromoted.
//
// Proposals (NewProposal) wait for a human and fail closed: a pending
// proposal whose expiresAt has passed reads as expired everywhere
// (ProposalStateAt) and cannot be approved (ErrConflict), even before
// ExpireProposals ledgers it with SystemActor. At most one pending proposal
// per record and kind (ErrConflict). Approve and Reject by any actor but a
// human are ErrForbidden (MayDecide); deciding a non-pending proposal is ErrConflict. An approved
// promote writes ApprovedPromotion; an approved demote removes the row and,
// with Invalidate or SupersededBy, invalidates the record (ApplyApproval).
//
// # Ledger
//
// Every mutation appends exactly one entry in the same transaction (Write
// appends one per request: write, or supersede naming the old record and
// carrying the new one; Import one import entry per record), sealed by
// SealEntry into a sha256 chain (HashEntry over every field but Hash).
// VerifyChain names the first edited, removed or reordered entry (a
// *LedgerError wrapping ErrCorrupt). No-ops and reads append nothing.
// Overlay summaries are not ledgered. StateAt is ReplayState over the whole
// ledger: the state is rebuilt with the same Apply* helpers the live
// backends use, so StateAt(T) equals what Promoted returned at T.
//
// The ledger binds the state. ReplayAll (ApplyEntry per entry) rebuilds
// every record, promotion row and proposal; a backend's Verify compares that
// with what it stores (CompareState, CompareRecordJSON, plus its own
// indexes) and reports each Difference in a *StateError. No write is
// appended onto a chain that does not verify and StateAt verifies the chain
// up to T (VerifyUpTo): both refuse with a *ChainError ("ledger does not
// verify at entry N"). CheckSealedJSON checks a stored entry from its bytes.
// Reader.Vouch checks the records a render delivers against their own entries
// (VouchRecord), at a cost proportional to what is rendered; compose calls
// VouchFor. Promoted refuses a record of its scope the ledger promoted whose
// promotion row is missing (PromotedByLedger, MissingPromotion) instead of
// leaving it out. Verify compares a proposal's selected-on fields too
// (CompareProposalRows) and its outcome is kept (VerifyMark, RecordVerify
// for a Verify run on a View): after a failure every write is a
// *VerifyFailedError until a Verify passes. A Head (SEQ:HASH) pinned outside the store is checked with
// CheckPin. Limits: every write passes CheckLimits (schema.Limits).
//
// # Service tokens
//
// A Token binds a served surface's caller to one agent file. The store
// keeps its public record and the SHA-256 of its secret (StoredToken,
// TokenHash), never the secret. CreateToken (PrepareToken's rules) and
// RevokeToken (ApplyRevoke; twice is a no-op) are human-only
// (CheckTokenActor) and append token-create / token-revoke entries that
// carry the StoredToken, hash included: ReplayAll rebuilds State.Tokens,
// Verify compares them with the stored rows, and Load stores
// ReplayTokens of the copied ledger. The hash of a 256-bit random secret
// cannot be turned back into it, so ledgering it gives nothing to
// authenticate with. TokenByHash compares hashes in constant time
// (TokenHashEqual, FindTokenHash).
//
// # Writing a backend
//
// A backend stores bytes; the rules live here. Implement View and Update
// over the database's own transactions (a read snapshot; a writer that
// serializes on the ledger head), and the Reader and Writer methods inside
// them with the pure helpers: ValidateWrite, NewRecord and the Apply*
// functions for state changes, SealEntry for the ledger, Rank (or Match and
// the ranking rule) for Search, AgentFilter for Promoted and Candidates,
// ReplayAll and CompareState for Verify, VouchRecord for Vouch. Wrap the Tx
// handed to Update's fn in a TxGuard. Then run storetest.Run against it:
// the kit is the specification (store/memstore is the smallest complete
// example; store/bolt and store/postgres the real ones).
//
// # Export and import
//
// Export visits every readable record in id order. Import (PrepareImport)
// keeps ids, is all-or-nothing, and refuses an invalid record (ErrInvalid
// naming its index) and an id that exists or repeats (ErrConflict).
package store
