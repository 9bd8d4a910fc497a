-- agent-ls store schema, version 2: what renders and writes check against
-- the ledger (issue 31).
--
-- The ledger's promote and approve entries by the record they name, read
-- from the entries' own hash-chained bytes (the layout store.SealEntryJSON
-- writes), not from a column a row edit could change: Promoted finds
-- through it the records of its scope the ledger promoted whose promotion
-- row is missing (promote.go, promotedMissingSQL uses the same expressions).
CREATE INDEX agent_ls_ledger_promotes
	ON agent_ls_ledger ((substring(body from '^\{"seq":[0-9]+,"at":"[^"]*","op":"(?:promote|approve)","recordId":"([^"]*)"')))
	WHERE body ~ '^\{"seq":[0-9]+,"at":"[^"]*","op":"(?:promote|approve)","recordId":"';

-- The finding of the last verification that failed ('' when the last one
-- passed): no write lands while it is set (store.VerifyFailedError).
ALTER TABLE agent_ls_head ADD COLUMN verify_failed text NOT NULL DEFAULT '';
