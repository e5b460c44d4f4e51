#!/usr/bin/env bash
# Run experiments and regenerate their figures.
#   scripts/reproduce.sh                 # every experiment in experiments/*.yaml, plus the fio ceiling
#   scripts/reproduce.sh quick frontier  # just these
#   QUICK=1 scripts/reproduce.sh         # with --quick overrides (short, CI-sized)
# Results land in results/<experiment>/<run-stamp>/ with their manifest.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o /tmp/brokerlab-repro ./cmd/brokerlab
flags=()
[ "${QUICK:-0}" = 1 ] && flags+=(--quick)
if [ $# -eq 0 ]; then
  set -- $(ls experiments/*.yaml | xargs -n1 basename | sed 's/\.yaml$//')
  if ! command -v fio >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq fio) >/dev/null 2>&1 || true
  fi
  if command -v fio >/dev/null 2>&1; then
    /tmp/brokerlab-repro ceiling --out results
  else
    echo "fio not installed: skipping the device ceiling" >&2
  fi
fi
for e in "$@"; do
  /tmp/brokerlab-repro run "experiments/$e.yaml" --out results "${flags[@]}"
done
scripts/plots.sh
