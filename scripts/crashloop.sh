#!/usr/bin/env bash
# crashloop.sh — kill -9 loop of a brokerlab broker under network producer
# load (issue 7).
#
# usage: scripts/crashloop.sh [-n CYCLES] [-d DIR] [-f FLUSH] [-s SEGMENT]
#
#   -n CYCLES   kill/restart cycles (default 3; use 100 for the full run)
#   -d DIR      work directory (store, logs, ack logs); kept afterwards.
#               Default: a temporary directory, removed on success.
#   -f FLUSH    pin the flush policy (sync, group or async); default: rotate
#               group → async → sync across cycles
#   -s SEGMENT  commit-log segment size (default 1MiB, so cycles cross rolls)
#
# It builds brokerlab and cmd/crashcheck, runs `brokerlab namesrv` and
# `brokerlab broker` as separate processes on 127.0.0.1 (free ports), and for
# every cycle: starts the broker on the same store with the next write path
# (mmap → pwrite → pool → direct; the on-disk format does not depend on it)
# and flush policy, checks the previous cycle (crashcheck verify: every
# message acknowledged under sync/group is consumable with identical body
# and properties, the queues hold no holes or duplicates, no record fails its
# CRC; under async the recovered log is a clean prefix, and on mmap and
# pwrite nothing acknowledged is lost either), drives producer load
# (crashcheck produce logs and fdatasyncs every acknowledgement), and kills
# the broker with SIGKILL after a random 0.3–2 s. After the last cycle the
# broker is restarted, checked, stopped cleanly, and the store is checked
# offline. It prints
#
#   cycles=N acknowledged=M lost=0 corrupt=0 async_lost=K
#
# and exits non-zero if an acknowledged message was lost or anything corrupt
# was found. Every process it starts is stopped by PID.
set -euo pipefail

cycles=3
work=""
pin_flush=""
segment=1MiB
while getopts "n:d:f:s:h" opt; do
	case $opt in
	n) cycles=$OPTARG ;;
	d) work=$OPTARG ;;
	f) pin_flush=$OPTARG ;;
	s) segment=$OPTARG ;;
	*)
		sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'
		exit 2
		;;
	esac
done
if ! [[ $cycles =~ ^[0-9]+$ ]] || ((cycles < 1 || cycles > 10000)); then
	echo "crashloop: -n must be 1..10000" >&2
	exit 2
fi
case $pin_flush in "" | sync | group | async) ;; *)
	echo "crashloop: -f must be sync, group or async" >&2
	exit 2
	;;
esac

repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crashloop.XXXXXX")
keep_work=1
if [[ -z $work ]]; then
	work=$tmp/work
	keep_work=0
fi
mkdir -p "$work"
bin=$tmp/brokerlab
cc=$tmp/crashcheck

ns_pid="" broker_pid="" prod_pid=""
stop_pid() { # stop_pid PID: TERM, then KILL after 10 s
	local pid=$1 i
	[[ -n $pid ]] || return 0
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
failed=1
cleanup() {
	stop_pid "$prod_pid"
	stop_pid "$broker_pid"
	stop_pid "$ns_pid"
	if ((failed == 0 && keep_work == 0)); then
		rm -rf "$tmp"
	else
		echo "crashloop: logs and store kept in $work" >&2
		if ((keep_work == 1)); then
			rm -rf "$tmp" # the binaries; the work directory is elsewhere
		fi
	fi
}
trap cleanup EXIT

echo "crashloop: building brokerlab and crashcheck" >&2
(cd "$repo" && go build -o "$bin" ./cmd/brokerlab && go build -o "$cc" ./cmd/crashcheck)

ns_port=$("$cc" freeport)
"$bin" namesrv --listen "127.0.0.1:$ns_port" --log-level warn 2>>"$work/namesrv.log" &
ns_pid=$!
"$cc" wait -addr "127.0.0.1:$ns_port" -timeout 30s

broker_port=$("$cc" freeport)
broker_addr=127.0.0.1:$broker_port
paths=(mmap pwrite pool direct)
flushes=(group async sync)
unsupported=" "

# start_broker PATH FLUSH: start the broker on the store, wait until its
# store is open. Returns 3 if the write path is unsupported here.
start_broker() {
	local path=$1 flush=$2 log=$work/broker.log
	echo "=== start path=$path flush=$flush" >>"$log"
	"$bin" broker --namesrv "127.0.0.1:$ns_port" --listen "$broker_addr" --store "$work/store" \
		--write-path "$path" --flush "$flush" --segment-size "$segment" --log-level warn 2>>"$log" &
	broker_pid=$!
	if "$cc" wait -broker -addr "$broker_addr" -timeout 60s; then
		return 0
	fi
	if ! kill -0 "$broker_pid" 2>/dev/null && tail -n 20 "$log" | grep -qi "unsupported"; then
		wait "$broker_pid" 2>/dev/null || true
		broker_pid=""
		return 3
	fi
	echo "crashloop: broker did not come up (path=$path flush=$flush); see $log" >&2
	exit 1
}

# start_next CYCLE: start the broker with the cycle's write path (skipping
# unsupported ones) and flush policy; sets cur_path, cur_flush.
start_next() {
	local c=$1 i rc
	cur_flush=${pin_flush:-${flushes[c % 3]}}
	for ((i = 0; i < 4; i++)); do
		cur_path=${paths[(c + i) % 4]}
		[[ $unsupported == *" $cur_path "* ]] && continue
		rc=0
		start_broker "$cur_path" "$cur_flush" || rc=$?
		if ((rc == 0)); then
			return 0
		fi
		echo "crashloop: write path $cur_path unsupported on this file system; skipping it" >&2
		unsupported+="$cur_path "
	done
	echo "crashloop: no write path works here" >&2
	exit 1
}

tot_ack=0 tot_lost=0 tot_corrupt=0 tot_async_lost=0 verify_failed=0
# verify_prev CYCLE LABEL PATH: check the previous cycle's acknowledgements.
# On mmap and pwrite an async acknowledgement is in the kernel page cache,
# which outlives the killed process, so it is required too (-strict-async);
# pool and direct may lose the bytes still in their user-space buffers.
verify_prev() {
	local c=$1 label=$2 path=$3 out rc=0 strict=false
	[[ $path == mmap || $path == pwrite ]] && strict=true
	out=$("$cc" verify -addr "$broker_addr" -acks "$work/acks.$c" -survivors "$work/survivors" \
		-cycle "$c" -label "$label" -strict-async="$strict") || rc=$?
	echo "$out"
	((rc == 0)) || verify_failed=1
	local kv
	for kv in $out; do
		case $kv in
		acknowledged=*) tot_ack=$((tot_ack + ${kv#*=})) ;;
		lost=*) tot_lost=$((tot_lost + ${kv#*=})) ;;
		corrupt=*) tot_corrupt=$((tot_corrupt + ${kv#*=})) ;;
		async_lost=*) tot_async_lost=$((tot_async_lost + ${kv#*=})) ;;
		esac
	done
}

prev_label="" prev_path=""
for ((c = 0; c < cycles; c++)); do
	start_next "$c"
	if ((c > 0)); then
		verify_prev $((c - 1)) "$prev_label restart_path=$cur_path" "$prev_path"
	fi
	prev_label="path=$cur_path flush=$cur_flush" prev_path=$cur_path
	"$cc" produce -addr "$broker_addr" -acks "$work/acks.$c" -cycle "$c" -flush "$cur_flush" \
		-conc 4 -duration 120s 2>>"$work/produce.log" &
	prod_pid=$!
	ms=$((300 + RANDOM % 1700))
	sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
	kill -KILL "$broker_pid"
	wait "$broker_pid" 2>/dev/null || true
	broker_pid=""
	kill -TERM "$prod_pid" 2>/dev/null || true
	wait "$prod_pid" || true
	prod_pid=""
done

# Restart once more, check the last cycle, stop cleanly, check offline.
start_next "$cycles"
verify_prev $((cycles - 1)) "$prev_label restart_path=$cur_path" "$prev_path"
stop_pid "$broker_pid"
broker_pid=""
case $segment in
*KiB) seg_bytes=$((${segment%KiB} * 1024)) ;;
*MiB) seg_bytes=$((${segment%MiB} * 1024 * 1024)) ;;
*GiB) seg_bytes=$((${segment%GiB} * 1024 * 1024 * 1024)) ;;
*) seg_bytes=$segment ;;
esac
offline_rc=0
"$cc" offline -store "$work/store" -segment-size "$seg_bytes" -survivors "$work/survivors" || offline_rc=$?

echo "cycles=$cycles acknowledged=$tot_ack lost=$tot_lost corrupt=$tot_corrupt async_lost=$tot_async_lost"
if ((tot_lost > 0 || tot_corrupt > 0 || verify_failed != 0 || offline_rc != 0)); then
	exit 1
fi
failed=0
