package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered schema step (migrations/NNNN_name.sql).
type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the embedded steps in version order.
func migrations() []migration {
	ents, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		panic(err) // embedded at build time
	}
	var out []migration
	for _, e := range ents {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			panic("postgres: migration file without a version: " + e.Name())
		}
		b, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			panic(err)
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out
}

func latestVersion() int {
	ms := migrations()
	return ms[len(ms)-1].version
}

// migrate brings the schema to the latest version. The common case, an
// up-to-date schema, is one query; otherwise the steps run in one
// transaction holding an advisory lock named after the schema, so
// concurrent first starts apply them once. Without create, a database that
// lacks steps is ErrNotInitialized.
func (s *Store) migrate(ctx context.Context, create bool) error {
	sh := s.shared
	have, err := appliedVersion(ctx, sh.pool)
	if err != nil {
		return fmt.Errorf("open store %s: %w", sh.location, s.wrap(err))
	}
	latest := latestVersion()
	if have > latest {
		return fmt.Errorf("open store %s: %w: schema version %d is newer than this agent-ls supports (%d); upgrade agent-ls", sh.location, ErrVersion, have, latest)
	}
	if have == latest {
		return nil
	}
	if !create {
		return fmt.Errorf("open store %s: %w: schema version %d, this agent-ls needs %d (run agent-ls memory init --store URL)", sh.location, ErrNotInitialized, have, latest)
	}
	err = pgx.BeginFunc(ctx, sh.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('agent-ls migrate ' || current_schema()))`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS agent_ls_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		have, err := appliedVersion(ctx, tx)
		if err != nil {
			return err
		}
		for _, m := range migrations() {
			if m.version <= have {
				continue
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO agent_ls_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
			return fmt.Errorf("open store %s: %w: this role may not create the store's tables; run agent-ls memory init --store URL as one that may (%v)", sh.location, ErrNotInitialized, err)
		}
		return fmt.Errorf("open store %s: migrate: %w", sh.location, s.wrap(err))
	}
	return nil
}

// appliedVersion is the highest migration applied, 0 for a database
// without the store's tables.
func appliedVersion(ctx context.Context, q querier) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT to_regclass(quote_ident(current_schema()) || '.agent_ls_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	var v *int
	if err := q.QueryRow(ctx, `SELECT max(version) FROM agent_ls_migrations`).Scan(&v); err != nil {
		return 0, err
	}
	if v == nil {
		return 0, nil
	}
	return *v, nil
}
