-- agent-ls store schema, version 4: service tokens (issue 33).
--
-- One row per token: its public id, the SHA-256 hex of its secret (never
-- the secret) and the body, store.StoredToken's JSON (the public record and
-- the hash, as the token-create and token-revoke ledger entries carry it:
-- Verify compares the rows with the ledger's replay). secret_hash is the
-- column a request's token is looked up by; it must equal the body's.
CREATE TABLE agent_ls_tokens (
	id          text COLLATE "C" PRIMARY KEY,
	secret_hash text NOT NULL UNIQUE,
	created_at  text NOT NULL,
	body        text NOT NULL
);
