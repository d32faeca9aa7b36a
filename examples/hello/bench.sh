#!/usr/bin/env bash
# Measures examples/hello (one goroutine) against examples/hello-workers
# (a loop goroutine and N workers) with wrk, side by side in one run.
#
#   examples/hello/bench.sh [runs] [seconds] [connections]
#
# Each configuration runs `runs` times, alternating servers; the script
# prints every run and the median requests/s. With two or more CPUs the
# servers are pinned to CPU 0 and wrk to CPU 1 ("pinned"), then run
# unpinned, sharing both CPUs with wrk.
set -euo pipefail
runs=${1:-5} secs=${2:-5} conns=${3:-50}
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "bench.sh needs wrk (apt-get install wrk)" >&2; exit 1; }
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/hello" ./examples/hello
go build -o "$bin/hello-workers" ./examples/hello-workers

port=18090
measure() { # name pin-server pin-wrk cmd...
	local name=$1 spin=$2 wpin=$3; shift 3
	port=$((port + 1))
	$spin "$@" -addr 127.0.0.1:$port 2>/dev/null &
	local pid=$!
	for _ in $(seq 50); do curl -sf http://127.0.0.1:$port/ >/dev/null && break; sleep 0.1; done
	local rps
	rps=$($wpin wrk -t1 -c"$conns" -d"${secs}s" http://127.0.0.1:$port/ | awk '/Requests\/sec/ {print $2}')
	kill "$pid"; wait "$pid" 2>/dev/null || true
	echo "$name $rps"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

modes=(unpinned)
[ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null && modes=(pinned unpinned)
results=$(mktemp)
for mode in "${modes[@]}"; do
	spin="" wpin=""
	[ "$mode" = pinned ] && spin="taskset -c 0" wpin="taskset -c 1"
	for _ in $(seq "$runs"); do
		measure "$mode single-goroutine" "$spin" "$wpin" "$bin/hello" | tee -a "$results"
		measure "$mode workers=1" "$spin" "$wpin" "$bin/hello-workers" -workers 1 | tee -a "$results"
		measure "$mode workers=2" "$spin" "$wpin" "$bin/hello-workers" -workers 2 | tee -a "$results"
		measure "$mode workers=4" "$spin" "$wpin" "$bin/hello-workers" -workers 4 | tee -a "$results"
	done
done
echo
echo "median requests/s over $runs runs of ${secs}s, $conns connections:"
for mode in "${modes[@]}"; do
	single=$(grep "^$mode single" "$results" | awk '{print $3}' | median)
	for cfg in single-goroutine workers=1 workers=2 workers=4; do
		m=$(grep "^$mode $cfg " "$results" | awk '{print $3}' | median)
		awk -v mode="$mode" -v cfg="$cfg" -v m="$m" -v s="$single" 'BEGIN {printf "%-9s %-17s %10.0f  %.2fx\n", mode, cfg, m, m / s}'
	done
done
rm -f "$results"
