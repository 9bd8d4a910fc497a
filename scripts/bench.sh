#!/usr/bin/env bash
# make bench: the Go benchmarks (library rows and the in-process LSP rows)
# and the Node LSP harness against yaml-language-server, then one summary.
#   BENCH_EDITS=50 (harness edits per server), BENCH_COUNT=3 (go -count).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
EDITS=${BENCH_EDITS:-50}
COUNT=${BENCH_COUNT:-3}
out=$(mktemp -d "${TMPDIR:-/tmp}/agent-ls-bench-XXXXXX")
trap 'rm -rf "$out"' EXIT

echo "== go benchmarks (-count $COUNT)"
$GO test -run='^$' -bench=. -benchmem -count "$COUNT" ./... | tee "$out/go.txt" | grep -E '^(Benchmark|ok|FAIL|---)' || true
if grep -q '^FAIL' "$out/go.txt"; then echo "bench: go benchmarks failed" >&2; exit 1; fi

echo "== LSP harness ($EDITS edits per server)"
$GO build -o "$out/agent-ls" ./cmd/agent-ls
$GO run ./bench/gen -dir "$out/ws"
(cd bench/lsp && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
node bench/lsp/harness.js "$out/agent-ls" "$out/ws" "$EDITS" | tee "$out/lsp.txt" >/dev/null

echo
echo "== summary (medians over -count runs; ratios within this run)"
awk '
function med(name, metric,   n, a, i, j, t) {
  n = split(v[name, metric], a, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
  return n ? a[int((n + 1) / 2)] : ""
}
/^Benchmark/ {
  name = $1; sub(/-[0-9]+$/, "", name)
  for (i = 3; i < NF; i += 2) v[name, $(i+1)] = v[name, $(i+1)] " " $i
}
END {
  ar1 = med("BenchmarkApplyRender1k", "ns/op"); f1 = med("BenchmarkConcatFloor1k", "ns/op"); ar100 = med("BenchmarkApplyRender100k", "ns/op")
  p1 = med("BenchmarkPromoted/unrelated=1000", "ns/op"); p100 = med("BenchmarkPromoted/unrelated=100000", "ns/op")
  printf "| %-52s | %-22s | %-14s |\n", "what", "measured", "target"
  printf "|%s|%s|%s|\n", "------------------------------------------------------", "------------------------", "----------------"
  if (ar1 && f1) printf "| %-52s | %-22s | %-14s |\n", "overlay Apply+Render 1k / concat floor", sprintf("%.1fx", ar1 / f1), "<= 10x"
  if (ar1 && ar100) printf "| %-52s | %-22s | %-14s |\n", "overlay Apply+Render 100k / 1k", sprintf("%.0f", ar100 / ar1), "<= 120"
  if (p1 && p100) printf "| %-52s | %-22s | %-14s |\n", "store Promoted 100k unrelated / 1k", sprintf("%.2fx", p100 / p1), "<= 2"
  split("BenchmarkInlayHint BenchmarkInlayHintAfterEdit BenchmarkHover BenchmarkDidChangeDiagnostics", L, " ")
  for (k = 1; k in L; k++) if (med(L[k], "p50-ms") != "")
    printf "| %-52s | %-22s | %-14s |\n", "lsp " substr(L[k], 10) " (in-process) p50 / p95 ms", med(L[k], "p50-ms") " / " med(L[k], "p95-ms"), (L[k] ~ /Hint|Hover/ ? "<= 5 / <= 20" : "-")
}' "$out/go.txt"
grep '^|' "$out/lsp.txt" | sed 1,2d | awk -F'|' '{ printf "| %-52s | %-22s | %-14s |\n", "harness" $2 "p50/p95 ms, init ms, RSS MB", $3 "/" $4 "," $5 "," $6, "" }'
echo
echo "harness ratios (peer / agent-ls; target >= 3x for didChange p50 and p95 vs yaml-ls delay 0, and for init):"
grep -E '^([|]|agent-ls inlayHint)' "$out/lsp.txt"
