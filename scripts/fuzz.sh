#!/usr/bin/env bash
# Runs every Go fuzz target in the module (`func FuzzX` in a *_test.go file)
# for FUZZTIME each (default 30s), one target at a time:
#
#	go test -run '^$' -fuzz '^FuzzX$' -fuzztime $FUZZTIME ./pkg
#
# Every target runs even if an earlier one fails; the script exits 1 when any
# failed and lists them. New crashers land in the package's
# testdata/fuzz/FuzzX/ directory: commit them as regression seeds.
# FUZZ='FuzzA FuzzB' restricts the run to the named targets.
set -uo pipefail
cd "$(dirname "$0")/.."

GO="${GO:-go}"
FUZZTIME="${FUZZTIME:-30s}"
only=" ${FUZZ:-} "

# test_files lists the module's test files: tracked ones in a git checkout,
# every one otherwise (an unpacked archive).
test_files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files '*_test.go'
	else
		find . -name '*_test.go' -not -path './editors/*' -not -path '*/node_modules/*' | sed 's|^\./||'
	fi
}

targets=()
while IFS= read -r file; do
	dir="./$(dirname "$file")"
	while IFS= read -r name; do
		targets+=("$dir $name")
	done < <(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file")
done < <(test_files | xargs grep -l '^func Fuzz' | sort)

if [ "${#targets[@]}" -eq 0 ]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi

failed=()
ran=0
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then
		continue
	fi
	ran=$((ran + 1))
	echo "== $name ($pkg, $FUZZTIME)"
	if ! "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg"; then
		failed+=("$name ($pkg)")
	fi
done

if [ "$ran" -eq 0 ]; then
	echo "fuzz: FUZZ=${FUZZ:-} matched no target" >&2
	exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
	echo "fuzz: ${#failed[@]} of $ran targets failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: $ran targets passed ($FUZZTIME each)"
