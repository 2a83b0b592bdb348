#!/usr/bin/env bash
# What durability: full costs: one GitHub write after another (wrk, 1 connection) and 8
# connections at once, against one sandbox of a release pomed whose state directory is on
# this host's disk (/var/tmp), durability normal and full interleaved, RUNS rounds; prints
# the median writes/s of each and the ratio full/normal. As root.
#
#   bench/durability.sh [RUNS]      (default 3; about 40 s a round)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
POMED=build/release/supervisor/pomed
[[ -x $POMED ]] || cmake --build build/release -j2 >/dev/null
command -v wrk >/dev/null || { echo "needs wrk" >&2; exit 1; }
W=$(mktemp -d /var/tmp/pome-durability.XXXXXX)
trap 'kill $PID 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT
cat >"$W/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"body":"a comment of a benchmark"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
LUA
# one LEVEL CONNECTIONS: writes/s
one() {
        rm -rf "$W/state"
        mkdir -p "$W/state"
        printf 'control_listen: 127.0.0.1:0\ngateway_listen: 127.0.0.1:0\nstate_dir: %s\nbus: none\ndurability: %s\nlimits:\n  max_tape: 1G\n  idle_timeout: off\n' \
                "$W/state" "$1" >"$W/pomed.conf"
        "$POMED" --config "$W/pomed.conf" >"$W/pomed.log" 2>&1 &
        PID=$!
        for _ in $(seq 100); do [[ -f $W/state/pomed.json ]] && break; sleep 0.05; done
        local control key created url
        control=$(jq -r .control_url "$W/state/pomed.json")
        key=$(head -1 "$W/state/api-key")
        created=$(curl -s -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
                --data-binary '{"twins":["github"]}' "$control/v1/sandboxes")
        url=$(jq -r .per_twin.github.rest_url <<<"$created")/repos/acme/api/issues/1/comments
        TOKEN=$(jq -r .session_token <<<"$created") wrk -t1 -c"$2" -d8s -s "$W/post.lua" "$url" |
                awk '/^Requests\/sec/ {print $2}'
        kill "$PID"
        wait "$PID" 2>/dev/null || true
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for c in 1 8; do
        : >"$W/normal.$c"
        : >"$W/full.$c"
        for _ in $(seq "$RUNS"); do
                one normal "$c" >>"$W/normal.$c"
                one full "$c" >>"$W/full.$c"
        done
        n=$(median <"$W/normal.$c")
        f=$(median <"$W/full.$c")
        printf '%s connection(s): normal %s writes/s, full %s writes/s, full/normal %.2f× (runs: normal %s; full %s)\n' \
                "$c" "$n" "$f" "$(awk -v f="$f" -v n="$n" 'BEGIN {print f / n}')" "$(paste -sd' ' "$W/normal.$c")" "$(paste -sd' ' "$W/full.$c")"
done
