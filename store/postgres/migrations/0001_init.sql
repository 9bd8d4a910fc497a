-- agent-ls store schema, version 1. Every table is prefixed agent_ls_ so the
-- store can share a schema with other tables.
CREATE TABLE agent_ls_head (
	id          integer PRIMARY KEY CHECK (id = 1),
	store_id    text    NOT NULL,
	ledger_seq  bigint  NOT NULL DEFAULT 0,
	ledger_hash text    NOT NULL DEFAULT '',
	changes     bigint  NOT NULL DEFAULT 0,
	rec_seq     bigint  NOT NULL DEFAULT 0,
	summary_seq bigint  NOT NULL DEFAULT 0
);
INSERT INTO agent_ls_head (id, store_id) VALUES (1, md5(random()::text || clock_timestamp()::text));

CREATE TABLE agent_ls_records (
	id         text   COLLATE "C" PRIMARY KEY,
	seq        bigint NOT NULL,
	scope      jsonb  NOT NULL,
	kind       text   NOT NULL,
	tags       text[] NOT NULL,
	tokens     text[] NOT NULL,
	target_key text,
	invalid_at text,
	expires_at text,
	body       text   NOT NULL
);
CREATE INDEX agent_ls_records_scope ON agent_ls_records USING gin (scope jsonb_path_ops);
CREATE INDEX agent_ls_records_tokens ON agent_ls_records USING gin (tokens);
CREATE INDEX agent_ls_records_target ON agent_ls_records (target_key) WHERE target_key IS NOT NULL;

CREATE TABLE agent_ls_promotions (
	record_id text  PRIMARY KEY REFERENCES agent_ls_records (id) ON DELETE CASCADE,
	scope     jsonb NOT NULL,
	body      text  NOT NULL
);
CREATE INDEX agent_ls_promotions_scope ON agent_ls_promotions USING gin (scope jsonb_path_ops);

CREATE TABLE agent_ls_proposals (
	id         text COLLATE "C" PRIMARY KEY,
	record_id  text NOT NULL,
	kind       text NOT NULL,
	state      text NOT NULL,
	expires_at text NOT NULL,
	body       text NOT NULL
);
CREATE INDEX agent_ls_proposals_record ON agent_ls_proposals (record_id);
CREATE INDEX agent_ls_proposals_pending ON agent_ls_proposals (expires_at) WHERE state = 'pending';

CREATE TABLE agent_ls_ledger (
	seq        bigint PRIMARY KEY,
	record_id  text   NOT NULL,
	carried_id text   NOT NULL,
	body       text   NOT NULL
);
CREATE INDEX agent_ls_ledger_record ON agent_ls_ledger (record_id);
CREATE INDEX agent_ls_ledger_carried ON agent_ls_ledger (carried_id) WHERE carried_id <> '';

CREATE TABLE agent_ls_summaries (
	seq  bigint PRIMARY KEY,
	body text   NOT NULL
);
