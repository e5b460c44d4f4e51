#!/usr/bin/env bash
# scripts/test.sh: the project's test command (README "Run the tests"; .ci/run runs it after go vet).
#
# Two modules are tested at once: the main module with the race detector, and compat/, the separate
# module that drives brokerlab with the official RocketMQ clients. compat's tests mostly wait on the
# clients' own timers (rebalance, offset commit), so they overlap the main suite instead of adding
# their minutes after it. compat's output is printed after the main suite's, whole. The exit status
# is non-zero if either failed.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
(cd compat && go test -count=1 -timeout 10m ./...) >"$log" 2>&1 &
compat=$!
go test -race -count=1 -timeout 25m ./...
main=$?
wait "$compat"
compatrc=$?
echo "== compat: the official RocketMQ clients against brokerlab (separate module)"
cat "$log"
if [ "$main" -ne 0 ] || [ "$compatrc" -ne 0 ]; then
  echo "FAIL: main module rc=$main, compat rc=$compatrc"
  exit 1
fi
