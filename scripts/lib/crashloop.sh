# shellcheck shell=bash
# lib/crashloop.sh — what scripts/crashloop.sh and scripts/crashloop_ha.sh
# share: the work directory and the binaries, stopping every process they
# start by PID, the name server, starting a broker on the next supported
# write path, the kill -9 under producer load, and the tally of crashcheck
# verify. Source it after option parsing, then call cl_init NAME CYCLES.
#
# Variables it sets and the scripts read: repo, tmp, work, keep_work, bin,
# cc, ns_port, ns_pid, cur_path, prod_pid, tot_ack, tot_lost, tot_corrupt,
# tot_async_lost, verify_failed, failed (0 marks success for cl_cleanup).
# The scripts list their PID variables in cl_pid_vars, stopped in order at
# exit.

cl_name=crashloop
cl_pid_vars=()
cl_paths=(mmap pwrite pool direct)
cl_unsupported=" "
prod_pid="" ns_pid=""
tot_ack=0 tot_lost=0 tot_corrupt=0 tot_async_lost=0 verify_failed=0
failed=1

# cl_init NAME CYCLES: check CYCLES, make the work directory (work: -d DIR,
# or a temporary one removed on success) and install the exit trap.
cl_init() {
	cl_name=$1
	local cycles=$2
	if ! [[ $cycles =~ ^[0-9]+$ ]] || ((cycles < 1 || cycles > 10000)); then
		echo "$cl_name: -n must be 1..10000" >&2
		exit 2
	fi
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$cl_name.XXXXXX")
	keep_work=1
	if [[ -z $work ]]; then
		work=$tmp/work
		keep_work=0
	fi
	mkdir -p "$work"
	bin=$tmp/brokerlab
	cc=$tmp/crashcheck
	trap cl_cleanup EXIT
}

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

# cl_cleanup (the exit trap): stop every process in cl_pid_vars, then
# remove the temporary directory, keeping the work directory unless the run
# succeeded in a temporary one.
cl_cleanup() {
	local v
	for v in "${cl_pid_vars[@]}"; do
		stop_pid "${!v}"
	done
	if ((failed == 0 && keep_work == 0)); then
		rm -rf "$tmp"
	else
		echo "$cl_name: logs and stores kept in $work" >&2
		if ((keep_work == 1)); then
			rm -rf "$tmp" # the binaries; the work directory is elsewhere
		fi
	fi
}

# cl_build: build brokerlab and crashcheck into tmp.
cl_build() {
	echo "$cl_name: building brokerlab and crashcheck" >&2
	(cd "$repo" && go build -o "$bin" ./cmd/brokerlab && go build -o "$cc" ./cmd/crashcheck)
}

# cl_start_namesrv: a name server on a free port (ns_port, ns_pid).
cl_start_namesrv() {
	ns_port=$("$cc" freeport)
	"$bin" namesrv --listen "127.0.0.1:$ns_port" --log-level warn 2>>"$work/namesrv.log" &
	ns_pid=$!
	"$cc" wait -addr "127.0.0.1:$ns_port" -timeout 30s
}

# cl_start_broker PIDVAR LOG ADDR WHAT ARGS...: start `brokerlab broker
# ARGS...` logging to LOG, its PID in PIDVAR, and wait until it serves on
# ADDR. Returns 3 if it exited saying its write path is unsupported here;
# exits the script if it did not come up otherwise. WHAT names it in
# messages ("broker (path=mmap flush=sync)").
cl_start_broker() {
	local pidvar=$1 log=$2 addr=$3 what=$4
	shift 4
	"$bin" broker "$@" 2>>"$log" &
	printf -v "$pidvar" '%s' $!
	if "$cc" wait -broker -addr "$addr" -timeout 60s; then
		return 0
	fi
	if ! kill -0 "${!pidvar}" 2>/dev/null && tail -n 20 "$log" | grep -qi "unsupported"; then
		wait "${!pidvar}" 2>/dev/null || true
		printf -v "$pidvar" '%s' ""
		return 3
	fi
	echo "$cl_name: $what did not come up; see $log" >&2
	exit 1
}

# cl_start_next CYCLE START: call START PATH with the cycle's write path
# (mmap → pwrite → pool → direct), skipping paths found unsupported here;
# sets cur_path.
cl_start_next() {
	local c=$1 start=$2 i rc
	for ((i = 0; i < 4; i++)); do
		cur_path=${cl_paths[(c + i) % 4]}
		[[ $cl_unsupported == *" $cur_path "* ]] && continue
		rc=0
		"$start" "$cur_path" || rc=$?
		if ((rc == 0)); then
			return 0
		fi
		echo "$cl_name: write path $cur_path unsupported on this file system; skipping it" >&2
		cl_unsupported+="$cur_path "
	done
	echo "$cl_name: no write path works here" >&2
	exit 1
}

# cl_load_and_kill CYCLE ADDR FLUSH PIDVAR: producer load against ADDR
# (every acknowledgement logged to work/acks.CYCLE), then SIGKILL the
# broker whose PID is in PIDVAR after a random 0.3–2 s and stop the load.
cl_load_and_kill() {
	local c=$1 addr=$2 flush=$3 pidvar=$4 ms
	"$cc" produce -addr "$addr" -acks "$work/acks.$c" -cycle "$c" -flush "$flush" \
		-conc 4 -duration 120s 2>>"$work/produce.log" &
	prod_pid=$!
	ms=$((300 + RANDOM % 1700))
	sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
	kill -KILL "${!pidvar}"
	wait "${!pidvar}" 2>/dev/null || true
	printf -v "$pidvar" '%s' ""
	kill -TERM "$prod_pid" 2>/dev/null || true
	wait "$prod_pid" || true
	prod_pid=""
}

# cl_verify CYCLE LABEL ADDR STRICT: crashcheck verify of the cycle's
# acknowledgements against the broker at ADDR; prints its line and adds it
# to the totals (verify_failed=1 when it failed).
cl_verify() {
	local c=$1 label=$2 addr=$3 strict=$4 out rc=0 kv
	out=$("$cc" verify -addr "$addr" -acks "$work/acks.$c" -survivors "$work/survivors" \
		-cycle "$c" -label "$label" -strict-async="$strict") || rc=$?
	echo "$out"
	((rc == 0)) || verify_failed=1
	for kv in $out; do
		case $kv in
		acknowledged=*) tot_ack=$((tot_ack + ${kv#*=})) ;;
		lost=*) tot_lost=$((tot_lost + ${kv#*=})) ;;
		corrupt=*) tot_corrupt=$((tot_corrupt + ${kv#*=})) ;;
		async_lost=*) tot_async_lost=$((tot_async_lost + ${kv#*=})) ;;
		esac
	done
}

# cl_offline STORE SEGMENT: crashcheck's offline check of a stopped store
# (SEGMENT as given to -s); returns its status.
cl_offline() {
	local store=$1 segment=$2 seg_bytes
	case $segment in
	*KiB) seg_bytes=$((${segment%KiB} * 1024)) ;;
	*MiB) seg_bytes=$((${segment%MiB} * 1024 * 1024)) ;;
	*GiB) seg_bytes=$((${segment%GiB} * 1024 * 1024 * 1024)) ;;
	*) seg_bytes=$segment ;;
	esac
	"$cc" offline -store "$store" -segment-size "$seg_bytes" -survivors "$work/survivors"
}
