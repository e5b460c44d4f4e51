#!/usr/bin/env bash
# Engine benchmark matrix + fio's matching ceiling in one run, summarized with
# benchstat and the target ratios (P1–P3, the independent baseline in P1).
#
#   scripts/bench.sh                                  # Append|RawPath|Independent, 5 passes, fio 5 × 10 s
#   COUNT=10 BENCH='^(Append|RawPath)/.*/size=1024/' scripts/bench.sh
#   COUNT=3 FIO=0 BENCH='^(Append|RawPath|Independent)/.*/flush=async/size=1024/conc=1$' scripts/bench.sh   # P1 only
#
# Fixed work per row: every row runs alone with -benchtime=Nx, N from the
# benchmark's plan (engine/commitlog/bench_plan_test.go, rowN): enough
# records to roll two segments and, for async rows, to cross two async flush
# cycles. Rows alternate: the plan runs the rows of one size and producer
# count next to each other (an Append row right before its RawPath row), and
# every other pass in reverse; benchratio pairs line i of a row with line i
# of another (pass i) and refuses pairs of unequal N.
#
# Environment: COUNT (passes, 5), BENCH (regexp over row names such as
# Append/path=mmap/flush=group/size=1024/conc=64, 'Append|RawPath|Independent'),
# BENCH_FLAGS (extra benchmark flags for the plan and every row, e.g.
# '-bench.seg=4194304'; N follows from them), FIO_RUNTIME (seconds per fio
# run, 10), FIO_SIZE (fio file, 1g),
# FIO_LOG_SIZE (bytes the log-pattern fio job writes as fresh segment-size files, 4g),
# FIO=0 skips fio (P3 is then reported missing), TMPDIR (where the benchmarks
# and fio write; both use the same file system), OUT (results root, results/bench),
# PROFILE=1 adds CPU profiles of the P1, P2 (group) and P3 rows (PROFILE_TIME each, 5s).
#
# Output, under results/bench/<stamp>/:
#   manifest.json   commit, dirty flag, kernel, CPU, store file system/device, Go, config
#   plan.txt        the rows run, in order: pass, -bench pattern, N, name
#   bench.txt       go test -bench output, one line per row and pass
#   fio-N.json      fio's reports: O_DIRECT sequential write, bs=64k, libaio, iodepth 4, one
#                   FIO_SIZE file overwritten in a loop for FIO_RUNTIME s (the issue's ceiling)
#   fio-files-N.json the same job over the log's pattern: fresh preallocated files of the
#                   segment size, each written once (the like-for-like ceiling)
#   fio.txt         the same as Go benchmark lines (BenchmarkFioWrite/…)
#   by-path.txt     benchstat -col /path bench.txt
#   by-flush.txt    benchstat -table .name -col /flush -row /path,/size,/conc bench.txt
#   ratios.txt      P1–P3: median and min–max over the passes (ratios.json with the per-pass values)
#   cpu-*.prof      with PROFILE=1: CPU profiles of the P1/P2/P3 rows (symbolized; go tool pprof
#                   reads them alone), cpu-*.top.txt their pprof -top, cpu-*.bench.txt the runs
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
BENCH=${BENCH:-Append|RawPath|Independent}
BENCH_FLAGS=${BENCH_FLAGS:-}
FIO=${FIO:-1}
FIO_RUNTIME=${FIO_RUNTIME:-10}
FIO_SIZE=${FIO_SIZE:-1g}
FIO_LOG_SIZE=${FIO_LOG_SIZE:-4g}
PROFILE=${PROFILE:-0}
PROFILE_TIME=${PROFILE_TIME:-5s}
tmp=${TMPDIR:-/tmp}

work=$(mktemp -d "$tmp/brokerlab-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
bl="$work/brokerlab"
# -buildvcs=true: the manifest records the binary's own vcs.revision (auto mode leaves it out here).
go build -buildvcs=true -o "$bl" ./cmd/brokerlab

# The manifest is collected before the output directory exists, so its dirty
# flag describes the source tree, not this run's results.
"$bl" benchratio manifest --store-dir "$tmp" --command "$0 $*" \
  --set count="$COUNT" --set bench="$BENCH" --set bench_flags="$BENCH_FLAGS" --set benchtime="Nx per row from plan.txt" \
  --set fio="$FIO" --set fio_runtime_s="$FIO_RUNTIME" --set fio_size="$FIO_SIZE" --set fio_log_size="$FIO_LOG_SIZE" \
  --set profile="$PROFILE" --set profile_time="$PROFILE_TIME" >"$work/manifest.json"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$([ -n "$(git status --porcelain 2>/dev/null)" ] && echo true || echo false)

out=${OUT:-results/bench}/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
mv "$work/manifest.json" "$out/manifest.json"
status=aborted
trap '"$bl" benchratio manifest --finish "$out" --status "$status" || true; rm -rf "$work"' EXIT
trap 'status=interrupted; exit 130' INT TERM
echo "writing $out" >&2

{
  echo "commit: $commit"
  echo "dirty: $dirty"
  echo "go: $(go env GOVERSION)"
} >"$out/bench.txt"
# The plan: every row matching BENCH with its fixed N, COUNT passes, rows of
# one cell together, every other pass reversed (see the header).
go test -c -o "$work/commitlog.test" ./engine/commitlog
# shellcheck disable=SC2086 # BENCH_FLAGS is a list of flags
"$work/commitlog.test" -bench.plan "$BENCH" -bench.passes "$COUNT" $BENCH_FLAGS >"$out/plan.txt"
failed=0
while IFS=$'\t' read -r pass pattern n name; do
  echo "pass $pass/$COUNT: $name N=$n" >&2
  echo "pass: $pass" >>"$out/bench.txt" # benchratio pairs by this, so a failed row run shifts nothing
  # shellcheck disable=SC2086
  if ! "$work/commitlog.test" -test.run '^$' -test.bench "$pattern" -test.benchtime "${n}x" $BENCH_FLAGS </dev/null >>"$out/bench.txt"; then
    echo "row $name failed in pass $pass (see bench.txt); its ratios pair only the passes it completed" >&2
    failed=$((failed + 1))
  fi
done <"$out/plan.txt"
[ "$failed" = 0 ] || echo "$failed row runs failed" >&2

ratio_inputs=("$out/bench.txt")
if [ "$FIO" != 0 ]; then
  if command -v fio >/dev/null; then
    fiodir=$(mktemp -d "$tmp/brokerlab-fio.XXXXXX")
    fios=()
    for i in $(seq 1 "$COUNT"); do
      if fio --name=ceiling --directory="$fiodir" --rw=write --bs=64k --ioengine=libaio --iodepth=4 --direct=1 \
        --size="$FIO_SIZE" --runtime="$FIO_RUNTIME" --time_based --unlink=1 \
        --output-format=json --output="$out/fio-$i.json"; then
        fios+=("$out/fio-$i.json")
      else
        echo "fio run $i failed (see $out/fio-$i.json); it is left out of P3" >&2
      fi
    done
    # The same job over the commit log's own file pattern: fresh files of the
    # benchmarks' segment size, preallocated and created as they are reached,
    # each written once (the job above overwrites one file in a loop, which
    # skips the extent allocation and conversion a log pays for every byte).
    # At the benchmarks' 1 MiB segment that is thousands of files: --openfiles
    # keeps fio's open descriptors few, as the log keeps few segments open.
    seg=$(sed -n 's/^segment-size: *//p' "$out/bench.txt" | head -1)
    seg=${seg:-67108864}
    nfiles=$(( $(numfmt --from=iec "${FIO_LOG_SIZE^^}") / seg ))
    for i in $(seq 1 "$COUNT"); do
      if fio --name=logpattern --directory="$fiodir" --rw=write --bs=64k --ioengine=libaio --iodepth=4 --direct=1 \
        --size=$((nfiles * seg)) --filesize="$seg" --nrfiles="$nfiles" --file_service_type=sequential \
        --create_on_open=1 --fallocate=native --unlink=1 --openfiles=8 \
        --output-format=json --output="$out/fio-files-$i.json"; then
        fios+=("$out/fio-files-$i.json")
      else
        echo "fio log-pattern run $i failed (see $out/fio-files-$i.json); it is left out of P3" >&2
      fi
    done
    rm -rf "$fiodir"
    if [ ${#fios[@]} -gt 0 ]; then
      "$bl" benchratio fio --set fs="$(findmnt -no FSTYPE -T "$tmp" 2>/dev/null || stat -f -c %T "$tmp")" --set fio-dir="$tmp" "${fios[@]}" | tee "$out/fio.txt"
      ratio_inputs+=("$out/fio.txt")
    fi
  else
    echo "fio is not installed (apt-get install fio): P3 has no ceiling" >&2
  fi
fi

# PROFILE=1: a CPU profile of each P1 row (Append, async, 1 KiB, 1 producer,
# per path in bench.txt), of the P2 group rows (pwrite and mmap, 64 producers)
# and of the P3 row, with pprof's top entries beside it.
if [ "$PROFILE" != 0 ]; then
  paths=$(sed -n 's|^BenchmarkAppend/path=\([a-z]*\)/flush=async/size=1024/conc=1-.*|\1|p' "$out/bench.txt" | sort -u)
  rows=()
  for p in $paths; do rows+=("path=$p/flush=async/size=1024/conc=1"); done
  for p in pwrite mmap; do rows+=("path=$p/flush=group/size=1024/conc=64"); done
  rows+=("path=direct/flush=async/size=65536/conc=4")
  for row in "${rows[@]}"; do
    name=Append_$(echo "$row" | tr '/=' '_-')
    "$work/commitlog.test" -test.run '^$' -test.bench "^BenchmarkAppend\$/$row\$" -test.benchtime "$PROFILE_TIME" \
      -test.cpuprofile "$out/cpu-$name.prof" >"$out/cpu-$name.bench.txt"
    go tool pprof -top -nodecount=30 "$work/commitlog.test" "$out/cpu-$name.prof" >"$out/cpu-$name.top.txt" 2>/dev/null || true
  done
fi

BENCHSTAT="go run golang.org/x/perf/cmd/benchstat"
$BENCHSTAT -ignore pass -col /path "$out/bench.txt" >"$out/by-path.txt" || true
$BENCHSTAT -ignore pass -table .name -col /flush -row /path,/size,/conc "$out/bench.txt" >"$out/by-flush.txt" || true
"$bl" benchratio --json "$out/ratios.json" "${ratio_inputs[@]}" >"$out/ratios.txt"
status=ok

echo
echo "== benchstat -col /path"
cat "$out/by-path.txt"
echo
echo "== benchstat -table .name -col /flush -row /path,/size,/conc"
cat "$out/by-flush.txt"
echo
echo "== target ratios (median, min–max over $COUNT passes)"
cat "$out/ratios.txt"
echo
echo "wrote $out"
