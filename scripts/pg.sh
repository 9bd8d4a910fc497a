#!/usr/bin/env bash
# pg.sh CMD [ARGS...]: runs CMD with a private PostgreSQL cluster for the
# tests of store/postgres and the surfaces over it. It installs Debian's
# postgresql when no server binaries are found (as root, with apt-get),
# creates a cluster with initdb in a temporary directory (as the postgres
# OS user when run as root: the server refuses to run as root), starts it
# on 127.0.0.1 and a free port with its socket in that directory, exports
# AGENT_LS_TEST_PG_URL for CMD, and stops and removes the cluster when CMD
# ends, whatever its exit status (which is pg.sh's).
#
# Without a server: under CI=true the run fails; otherwise CMD runs without
# AGENT_LS_TEST_PG_URL and the PostgreSQL tests skip.
set -euo pipefail

fail_or_warn() {
	local msg=$1
	shift
	if [ "${CI:-}" = "true" ]; then
		echo "pg.sh: $msg" >&2
		exit 1
	fi
	echo "pg.sh: warning: $msg (the PostgreSQL tests will skip)" >&2
	trap - EXIT
	[ -n "${DIR:-}" ] && stop
	unset AGENT_LS_TEST_PG_URL
	exec "$@"
}

pgbin() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
	if [ -n "$d" ] && [ -x "$d/initdb" ]; then
		echo "$d"
	fi
}

if [ $# -eq 0 ]; then
	echo "usage: scripts/pg.sh CMD [ARGS...]" >&2
	exit 2
fi

BIN=$(pgbin)
if [ -z "$BIN" ]; then
	if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) ||
			fail_or_warn "cannot install postgresql with apt-get" "$@"
		BIN=$(pgbin)
	fi
	[ -n "$BIN" ] || fail_or_warn "no PostgreSQL server binaries (apt-get install postgresql)" "$@"
fi

# As root, the cluster belongs to the postgres OS user (the Debian package
# creates it).
as_owner() { "$@"; }
if [ "$(id -u)" = 0 ]; then
	id postgres >/dev/null 2>&1 || fail_or_warn "running as root but there is no postgres user to own the cluster" "$@"
	as_owner() { runuser -u postgres -- "$@"; }
fi

DIR=$(mktemp -d "${TMPDIR:-/tmp}/agent-ls-pg.XXXXXX")
chmod 755 "$DIR"
[ "$(id -u)" = 0 ] && chown postgres "$DIR"
stop() {
	as_owner "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$DIR"
}
trap stop EXIT
# Killed (timeout, Ctrl-C, a closed terminal): stop the cluster too, and
# the command with it.
for sig in INT TERM HUP; do
	trap 'trap - EXIT; [ -n "${cmd_pid:-}" ] && kill "$cmd_pid" 2>/dev/null; stop; exit 143' "$sig"
done

as_owner "$BIN/initdb" -D "$DIR/data" -U agentls -A trust -E UTF8 --locale=C.UTF-8 -N >"$DIR/initdb.log" 2>&1 ||
	as_owner "$BIN/initdb" -D "$DIR/data" -U agentls -A trust -E UTF8 --locale=C -N >"$DIR/initdb.log" 2>&1 || {
	cat "$DIR/initdb.log" >&2
	fail_or_warn "initdb failed" "$@"
}

# A free port: one nothing answers on; a race with another process is
# caught by pg_ctl failing to start, and another port is tried.
started=""
for _ in 1 2 3 4 5 6 7 8; do
	PORT=$((20000 + RANDOM % 40000))
	if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
		continue
	fi
	if as_owner "$BIN/pg_ctl" -D "$DIR/data" -w -t 30 -l "$DIR/server.log" \
		-o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
		start >/dev/null 2>&1; then
		started=1
		break
	fi
done
if [ -z "$started" ]; then
	cat "$DIR/server.log" >&2 2>/dev/null || true
	fail_or_warn "the private PostgreSQL cluster did not start" "$@"
fi

export AGENT_LS_TEST_PG_URL="postgres://agentls@127.0.0.1:$PORT/postgres?sslmode=disable"
echo "pg.sh: private PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT" >&2
# The command runs in the background so that a signal to this script is
# handled at once (bash defers traps while a foreground child runs).
set +e
exec 3<&0 # a background command's stdin would be /dev/null: keep ours
"$@" <&3 3<&- &
cmd_pid=$!
wait "$cmd_pid"
rc=$?
set -e
exit $rc
