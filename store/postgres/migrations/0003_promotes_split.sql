-- agent-ls store schema, version 3: the index of promote and approve
-- entries (0002) without regular expressions.
--
-- 0002's index read the record id with a regular expression, which every
-- ledger insert evaluated twice (predicate and key): most of a save's extra
-- cost over version 1 (issue 30). The entry's first fields are laid out by
-- store.SealEntryJSON as {"seq":N,"at":"T","op":"OP","recordId":"ID",...
-- with no quote inside N, T, OP or ID, so splitting the entry's own bytes on
-- '"' gives OP as field 10, "recordId" as field 12 and ID as field 14.
-- The index still reads the hash-chained bytes, not a column a row edit
-- could change; promote.go (ledgerPromotedID, ledgerPromotes) spells the
-- same expressions, which the planner needs to use it.
DROP INDEX IF EXISTS agent_ls_ledger_promotes;
CREATE INDEX agent_ls_ledger_promoted_ids
	ON agent_ls_ledger ((split_part(body, '"', 14)))
	WHERE left(body, 7) = '{"seq":' AND split_part(body, '"', 10) IN ('promote', 'approve') AND split_part(body, '"', 12) = 'recordId';
