#!/usr/bin/env bash
# Rerun experiments and refresh the gallery.
#   scripts/reproduce.sh                         # replay the newest committed run of every experiment:
#                                                #   exactly the resolved config its manifest recorded
#                                                #   (cells, repetitions, durations, seed)
#   scripts/reproduce.sh results/peers/<stamp>   # replay these runs
#   scripts/reproduce.sh --fresh quick peers     # run experiments/<name>.yaml anew
#       REFERENCE=1 adds --reference (>= 60 s warm-up, >= 5 repetitions, 5 min where writeback matters);
#       without names it then runs the reference set (every experiment but the quick demo and p4, whose
#       process cells and pairings are in peers),
#       QUICK=1 adds --quick (short: a functional check, not reference numbers)
# New runs land in results/<experiment>/<new stamp>/. The binary is built with
# its VCS stamp, and writing into results/ from a modified tree is refused
# (ALLOW_DIRTY=1 passes --allow-dirty and saves the diff beside the run).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/brokerlab
go build -buildvcs=true -o "$bin" ./cmd/brokerlab
flags=(--out results --no-plots)
[ "${ALLOW_DIRTY:-0}" = 1 ] && flags+=(--allow-dirty)
if ! command -v fio >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && apt-get install -y -qq fio) >/dev/null 2>&1 || true
fi
command -v fio >/dev/null 2>&1 || echo "fio not installed: the ceilings are not measured" >&2

if [ "${1:-}" = --fresh ]; then
  shift
  [ "${REFERENCE:-0}" = 1 ] && flags+=(--reference)
  [ "${QUICK:-0}" = 1 ] && flags+=(--quick)
  if [ $# -eq 0 ] && [ "${REFERENCE:-0}" = 1 ]; then
    set -- stages omission groupcommit frontier peers segments residency coldread replication filesystems
  fi
  [ $# -gt 0 ] || set -- $(ls experiments/*.yaml | xargs -n1 basename | sed 's/\.yaml$//')
  for e in "$@"; do
    "$bin" run "experiments/$e.yaml" "${flags[@]}"
  done
else
  if [ $# -eq 0 ]; then
    for d in results/*/; do
      run=$(ls -d "$d"*/ 2>/dev/null | sort | tail -1)
      [ -n "$run" ] && [ -f "$run/manifest.json" ] && grep -q '"config": {' "$run/manifest.json" && set -- "$@" "${run%/}"
    done
  fi
  for run in "$@"; do
    case "$run" in results/ceiling/*) echo "skip $run: use 'brokerlab ceiling'" >&2; continue ;; esac
    "$bin" run --replay "$run" "${flags[@]}"
  done
fi
scripts/plots.sh
