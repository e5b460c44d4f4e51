#!/usr/bin/env bash
# Regenerate every figure from the committed results (figures are pure
# functions of result files), then refresh the README gallery's copies.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o /tmp/brokerlab-plots ./cmd/brokerlab
runs=$(find results -name result.json -printf '%h\n' | sort)
[ -n "$runs" ] || { echo "no results under results/" >&2; exit 0; }
for d in $runs; do
  if /tmp/brokerlab-plots plot "$d" >/dev/null; then
    echo "plotted $d"
  else
    echo "no figures for $d (see the message above)" >&2
  fi
done
# The README shows the newest run of each experiment: copy its chosen figures
# to plots/gallery/ (names listed in scripts/gallery.txt: experiment figure).
mkdir -p plots/gallery
while read -r exp fig; do
  [ -z "$exp" ] || [ "${exp#\#}" != "$exp" ] && continue
  run=$(ls -d results/"$exp"/*/ 2>/dev/null | sort | tail -1)
  [ -n "$run" ] && [ -f "$run/figures/$fig.png" ] && cp "$run/figures/$fig.png" "plots/gallery/$exp-$fig.png"
done < scripts/gallery.txt
