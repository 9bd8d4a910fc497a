#!/usr/bin/env bash
# Long runs of the reliability tests in store/bolt (`make soak`):
#
#	TestSoakConcurrentProcesses  8 child processes saving and corroborating one
#	                             store for AGENT_LS_SOAK (default here 30s)
#	TestSIGKILLWriter            a child writer killed with SIGKILL
#	                             AGENT_LS_KILLS times (default here 500)
#	TestSIGKILLDuringMigration   a child killed while migrating a v0 file (10x)
#
# `go test` runs them with quick settings (3s, 50 kills). SOAK_RACE=1 adds the
# race detector (slower: fewer operations in the same time).
set -euo pipefail
cd "$(dirname "$0")/.."

GO="${GO:-go}"
export AGENT_LS_SOAK="${AGENT_LS_SOAK:-30s}"
export AGENT_LS_KILLS="${AGENT_LS_KILLS:-500}"
race=()
if [ "${SOAK_RACE:-}" = 1 ]; then
	race=(-race)
fi

echo "soak: AGENT_LS_SOAK=$AGENT_LS_SOAK AGENT_LS_KILLS=$AGENT_LS_KILLS ${race[*]:-}"
"$GO" test "${race[@]}" -count=1 -v -timeout 60m \
	-run '^(TestSoakConcurrentProcesses|TestSIGKILLWriter|TestSIGKILLDuringMigration)$' ./store/bolt/
