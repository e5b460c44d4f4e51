#!/usr/bin/env bash
# Derive the figures of the newest run of each experiment (figures are pure
# functions of the result files: byte-identical from the same inputs) into a
# scratch directory, and copy the gallery's figures (results/README.md; listed in
# scripts/gallery.txt: experiment figure) to plots/gallery/. Nothing is written
# into results/: a run keeps only result.json, bench.txt, manifest.json and
# its gzip'd .hlog files. For every figure and .hgrm of a run:
#   go run ./cmd/brokerlab plot --out DIR results/<experiment>/<stamp>
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/brokerlab
go build -o "$bin" ./cmd/brokerlab
scratch=${FIGURES:-$(mktemp -d)/figures}
mkdir -p plots/gallery
while read -r exp fig; do
  [ -z "$exp" ] || [ "${exp#\#}" != "$exp" ] && continue
  run=$(ls -d results/"$exp"/*/ 2>/dev/null | sort | tail -1)
  [ -n "$run" ] || { echo "no run of $exp" >&2; continue; }
  run=${run%/}
  out="$scratch/$exp/$(basename "$run")"
  if [ ! -d "$out" ]; then
    "$bin" plot --no-hgrm --out "$scratch" "$run" >/dev/null || echo "no figures for $run (see the message above)" >&2
  fi
  if [ -f "$out/$fig.png" ]; then
    cp "$out/$fig.png" "plots/gallery/$exp-$fig.png"
  else
    echo "gallery: $out/$fig.png not drawn" >&2
  fi
done < scripts/gallery.txt
echo "figures of the newest runs: $scratch"
