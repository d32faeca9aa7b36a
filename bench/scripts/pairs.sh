#!/bin/bash
# pairs.sh runs bench/cmd/httpserver's evloop server under several flag
# settings in turn, round after round, each under the same wrk load, and
# prints each run's throughput, requests per second of the server's own CPU
# time (/proc/PID/stat before and after) and wrk's p99. The server is pinned
# to CPU 0, wrk to CPU 1.
#
#   bench/scripts/pairs.sh CONNS ROUNDS PIPELINE name="flags" ...
#   bench/scripts/pairs.sh 256 3 1 off="" nap20="-evloop-nap 20us"
#
# PIPELINE is 1, or 16 for 16 requests a write.
set -euo pipefail
conns=$1 rounds=$2 pipeline=$3
shift 3
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/httpserver
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/httpserver
script=$(dirname "$bin")/pipe16.lua
cat > "$script" <<'LUA'
init = function(args)
  local r = {}
  for i = 1, 16 do r[i] = wrk.format(nil, "/plaintext") end
  req = table.concat(r)
end
request = function() return req end
LUA
wrkargs=()
if [ "$pipeline" = 16 ]; then wrkargs=(-s "$script"); fi
hz=$(getconf CLK_TCK)
port=18080
for _ in $(seq "$rounds"); do
  for spec in "$@"; do
    name=${spec%%=*} flags=${spec#*=}
    port=$((port + 1))
    # shellcheck disable=SC2086
    taskset -c 0 "$bin" -impl evloop -addr 127.0.0.1:$port $flags >/dev/null 2>&1 &
    pid=$!
    sleep 0.5
    t0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$(taskset -c 1 wrk -t1 -c"$conns" -d5s --latency "${wrkargs[@]}" http://127.0.0.1:$port/plaintext)
    t1=$(awk '{print $14+$15}' /proc/$pid/stat)
    kill $pid
    wait $pid 2>/dev/null || true
    req=$(awk '/requests in/{print $1}' <<<"$out")
    rps=$(awk '/Requests\/sec/{print $2}' <<<"$out")
    p99=$(awk '$1=="99%"{print $2}' <<<"$out")
    eff=$(awk -v r="$req" -v a="$t0" -v b="$t1" -v hz="$hz" 'BEGIN{printf "%.0f", r/((b-a)/hz)}')
    echo "$name conns=$conns pipeline=$pipeline rps=$rps rps/CPU-s=$eff p99=$p99"
  done
done
