#!/usr/bin/env bash
# crashloop_ha.sh — kill -9 loop of a SYNC_MASTER (asynchronous flush) with a
# slave, under network producer load (issue 14 §3): durability by
# replication instead of fsync.
#
# usage: scripts/crashloop_ha.sh [-n CYCLES] [-d DIR] [-s SEGMENT]
#
#   -n CYCLES   kill/restart cycles of the master (default 3; 100 for a long run)
#   -d DIR      work directory (stores, logs, ack logs); kept afterwards.
#               Default: a temporary directory, removed on success.
#   -s SEGMENT  commit-log segment size (default 1MiB, so cycles cross rolls)
#
# It builds brokerlab and cmd/crashcheck, runs a name server, a master
# (`--role SYNC_MASTER --flush async`) and its slave (`--role SLAVE
# --slave-read`, pointed at the master's HA port) as separate processes on
# 127.0.0.1. Each cycle restarts the master on its store with the next write
# path (mmap → pwrite → pool → direct), drives producer load against it
# (crashcheck produce: every SEND_OK is logged and fdatasynced), kills the
# master with SIGKILL after a random 0.3–2 s, and checks the SLAVE
# (crashcheck verify -strict-async against the slave's pulls): every
# acknowledged message of this and every earlier cycle is there with its
# body, no queue has a hole or a duplicate, no record fails its CRC. The
# master's flush policy is async, so none of this rests on an fsync. The
# master must never refuse its slave (its log always covers the slave's:
# it streams only bytes that survive the process). At the end both brokers
# stop cleanly and the slave's store is checked offline. It prints
#
#   cycles=N acknowledged=M lost=0 corrupt=0
#
# and exits non-zero if an acknowledged message is missing on the slave or
# anything is corrupt. Every process it starts is stopped by PID.
set -euo pipefail

cycles=3
work=""
segment=1MiB
while getopts "n:d:s:h" opt; do
	case $opt in
	n) cycles=$OPTARG ;;
	d) work=$OPTARG ;;
	s) segment=$OPTARG ;;
	*)
		sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'
		exit 2
		;;
	esac
done
# shellcheck source=lib/crashloop.sh
source "$(dirname "$0")/lib/crashloop.sh"
master_pid="" slave_pid=""
cl_pid_vars=(prod_pid master_pid slave_pid ns_pid)
cl_init crashloop_ha "$cycles"
cl_build
cl_start_namesrv

master_addr=127.0.0.1:$("$cc" freeport)
ha_addr=127.0.0.1:$("$cc" freeport)
slave_addr=127.0.0.1:$("$cc" freeport)
common=(--namesrv "127.0.0.1:$ns_port" --segment-size "$segment" --broker-name broker-ha --cluster ha --log-level info)

# start_master PATH: returns 3 if the write path is unsupported here.
start_master() {
	local path=$1 log=$work/master.log
	echo "=== start path=$path" >>"$log"
	cl_start_broker master_pid "$log" "$master_addr" "master (path=$path)" \
		"${common[@]}" --listen "$master_addr" --store "$work/master" --write-path "$path" --flush async \
		--role SYNC_MASTER --ha-listen "$ha_addr"
}

start_next() { cl_start_next "$1" start_master; } # start_next CYCLE; sets cur_path

# wait_streaming: until the master (re)started last streams to the slave
# (the slave reconnects every 5 s), so SYNC sends can be acknowledged.
wait_streaming() {
	local i
	for ((i = 0; i < 300; i++)); do
		if awk '/^=== start/ {s = 0} /ha: streaming to slave/ {s = 1} END {exit !s}' "$work/master.log"; then
			return 0
		fi
		sleep 0.1
	done
	echo "crashloop_ha: the slave did not reconnect to the master within 30 s; see $work/master.log" >&2
	exit 1
}

verify_slave() { # verify_slave CYCLE LABEL: every acknowledgement is on the slave
	cl_verify "$1" "$2" "$slave_addr" true
}

start_next 0
"$bin" broker "${common[@]}" --listen "$slave_addr" --store "$work/slave" --write-path mmap --flush async \
	--role SLAVE --broker-id 1 --slave-read --ha-master "$ha_addr" 2>>"$work/slave.log" &
slave_pid=$!
"$cc" wait -broker -addr "$slave_addr" -timeout 60s
wait_streaming

# Warm-up: the topic is created on the master; wait until the slave copied
# its config (every 10 s) and serves the warm-up acknowledgements.
"$cc" produce -addr "$master_addr" -acks "$work/acks.warm" -cycle 0 -flush async -conc 2 -duration 1s 2>>"$work/produce.log"
: >"$work/survivors"
ok=0
for ((i = 0; i < 60; i++)); do
	if "$cc" verify -addr "$slave_addr" -acks "$work/acks.warm" -survivors "$work/survivors.warm" -cycle 0 \
		-label warmup -strict-async=true >/dev/null 2>>"$work/warmup.log"; then
		ok=1
		break
	fi
	rm -f "$work/survivors.warm"
	sleep 0.5
done
if ((ok == 0)); then
	echo "crashloop_ha: the slave never served the warm-up messages; see $work/warmup.log and $work/slave.log" >&2
	exit 1
fi
cp "$work/survivors.warm" "$work/survivors"

for ((c = 0; c < cycles; c++)); do
	wait_streaming
	cl_load_and_kill "$c" "$master_addr" async master_pid
	verify_slave "$c" "master_path=$cur_path flush=async role=SYNC_MASTER"
	start_next $((c + 1))
done

stop_pid "$master_pid"
master_pid=""
stop_pid "$slave_pid"
slave_pid=""
refused=0
if grep -q "refusing to stream" "$work/master.log"; then
	echo "crashloop_ha: the master refused its slave after a restart; see $work/master.log" >&2
	refused=1
fi
offline_rc=0
cl_offline "$work/slave" "$segment" || offline_rc=$?

echo "cycles=$cycles acknowledged=$tot_ack lost=$tot_lost corrupt=$tot_corrupt"
if ((tot_lost > 0 || tot_corrupt > 0 || verify_failed != 0 || offline_rc != 0 || refused != 0)); then
	exit 1
fi
failed=0
