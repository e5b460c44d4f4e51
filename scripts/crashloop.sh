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
case $pin_flush in "" | sync | group | async) ;; *)
	echo "crashloop: -f must be sync, group or async" >&2
	exit 2
	;;
esac

# shellcheck source=lib/crashloop.sh
source "$(dirname "$0")/lib/crashloop.sh"
broker_pid=""
cl_pid_vars=(prod_pid broker_pid ns_pid)
cl_init crashloop "$cycles"
cl_build
cl_start_namesrv

broker_addr=127.0.0.1:$("$cc" freeport)
flushes=(group async sync)

# start_broker PATH: start the broker on the store with PATH and cur_flush,
# wait until its store is open. Returns 3 if the write path is unsupported
# here.
start_broker() {
	local path=$1 log=$work/broker.log
	echo "=== start path=$path flush=$cur_flush" >>"$log"
	cl_start_broker broker_pid "$log" "$broker_addr" "broker (path=$path flush=$cur_flush)" \
		--namesrv "127.0.0.1:$ns_port" --listen "$broker_addr" --store "$work/store" \
		--write-path "$path" --flush "$cur_flush" --segment-size "$segment" --log-level warn
}

# start_next CYCLE: start the broker with the cycle's write path (skipping
# unsupported ones) and flush policy; sets cur_path, cur_flush.
start_next() {
	cur_flush=${pin_flush:-${flushes[$1 % 3]}}
	cl_start_next "$1" start_broker
}

# verify_prev CYCLE LABEL PATH: check the previous cycle's acknowledgements.
# On mmap and pwrite an async acknowledgement is in the kernel page cache,
# which outlives the killed process, so it is required too (-strict-async);
# pool and direct may lose the bytes still in their user-space buffers.
verify_prev() {
	local strict=false
	[[ $3 == mmap || $3 == pwrite ]] && strict=true
	cl_verify "$1" "$2" "$broker_addr" "$strict"
}

prev_label="" prev_path=""
for ((c = 0; c < cycles; c++)); do
	start_next "$c"
	if ((c > 0)); then
		verify_prev $((c - 1)) "$prev_label restart_path=$cur_path" "$prev_path"
	fi
	prev_label="path=$cur_path flush=$cur_flush" prev_path=$cur_path
	cl_load_and_kill "$c" "$broker_addr" "$cur_flush" broker_pid
done

# Restart once more, check the last cycle, stop cleanly, check offline.
start_next "$cycles"
verify_prev $((cycles - 1)) "$prev_label restart_path=$cur_path" "$prev_path"
stop_pid "$broker_pid"
broker_pid=""
offline_rc=0
cl_offline "$work/store" "$segment" || offline_rc=$?

echo "cycles=$cycles acknowledged=$tot_ack lost=$tot_lost corrupt=$tot_corrupt async_lost=$tot_async_lost"
if ((tot_lost > 0 || tot_corrupt > 0 || verify_failed != 0 || offline_rc != 0)); then
	exit 1
fi
failed=0
