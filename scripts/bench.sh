#!/usr/bin/env bash
# Run the go test -bench matrix with -count and summarize it with benchstat.
#   scripts/bench.sh                     # engine core: Append and RawPath, count 5
#   COUNT=10 BENCH='Append/.*/size=1024' scripts/bench.sh
# Output: results/bench/<stamp>/bench.txt plus benchstat tables by path and by flush.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
BENCH=${BENCH:-Append|RawPath}
PKGS=${PKGS:-./engine/commitlog}
BENCHTIME=${BENCHTIME:-1s}
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$([ -n "$(git status --porcelain 2>/dev/null)" ] && echo true || echo false) # before the output dir exists
out=results/bench/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
{
  echo "commit: $commit"
  echo "dirty: $dirty"
  echo "go: $(go env GOVERSION)"
} > "$out/bench.txt"
go test $PKGS -run '^$' -bench "$BENCH" -benchtime "$BENCHTIME" -count "$COUNT" | tee -a "$out/bench.txt"
BENCHSTAT="go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"
$BENCHSTAT -col /path "$out/bench.txt" > "$out/by-path.txt" || true
$BENCHSTAT -col /flush -row /conc "$out/bench.txt" > "$out/by-flush.txt" || true
echo "wrote $out"
