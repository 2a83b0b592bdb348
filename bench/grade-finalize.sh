#!/usr/bin/env bash
# Benchmark (not a test): what grading at finalize costs pomed's one event loop. Starts a
# pomed of its own, fills a GitHub + Slack sandbox's tape with COMMENTS issue comments of
# KIB KiB each (a tape row carries the request and the response body; the final world
# keeps every comment), READS listings of them (100 a page: big rows, no change to the
# world) and REJECTS comments without a body (422: small rows, the world unchanged, but
# each stamped add_issue_comment, so the task's "was called" criterion cites every one of
# them), then finalizes it with a task (tests/integration/tasks/triage-login.md) while a
# second sandbox is called back to back. Prints the tape and world sizes, pomed's own
# timings of grading and summary.md (its log lines), the finalize's wall time, and the
# probe's latencies before and during the finalize.
# Usage: bench/grade-finalize.sh [COMMENTS [KIB [READS [REJECTS]]]] (root, jq, curl, bc;
# default 600 × 16 KiB + 20 reads: a ~60 MiB tape, near limits.max_tape's default 64M, and
# a ~10 MiB world — a world must stay under the pod frame's 16 MiB to be exported).
# POME_BUILD_DIR (default build/release) is the build to measure.
set -euo pipefail
cd "$(dirname "$0")/.."
COMMENTS=${1:-600}
KIB=${2:-16}
READS=${3:-20}
REJECTS=${4:-0}
B=${POME_BUILD_DIR:-build/release}
TMP=$(mktemp -d /tmp/pome-bench.XXXXXX)
chmod 755 "$TMP"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null || true; done; wait 2>/dev/null; [[ -n ${KEEP_TMP:-} ]] && echo "kept $TMP" || rm -rf "$TMP"' EXIT

cat >"$TMP/pomed.conf" <<CONF
control_listen: 127.0.0.1:0
gateway_listen: 127.0.0.1:0
state_dir: $TMP/state
bus: none
limits:
  max_tape: 1G
  idle_timeout: "off"
  request_timeout: 120s
pod:
  memory_max: 1G
CONF
$B/supervisor/pomed --config "$TMP/pomed.conf" >"$TMP/pomed.log" 2>&1 &
POMED=$!
PIDS+=($POMED)
for _ in $(seq 100); do [[ -f $TMP/state/pomed.json ]] && break; sleep 0.05; done
CONTROL=$(jq -r .control_url "$TMP/state/pomed.json")
KEY=$(head -1 "$TMP/state/api-key")
create() { curl -s -X POST -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' --data-binary "$1" "$CONTROL/v1/sandboxes"; }

TASK=tests/integration/tasks/triage-login.md
A=$(create "$(jq -nc --rawfile t "$TASK" '{twins: ["github", "slack"], task_markdown: $t}')")
SID=$(jq -r .session_id <<<"$A")
TOK=$(jq -r .session_token <<<"$A")
GH=$(jq -r .per_twin.github.rest_url <<<"$A")
[[ $SID == ses_* ]] || { echo "create: $A" >&2; exit 1; }

# the calls over one keep-alive connection (a curl config of every request)
jq -nc --argjson n $((KIB * 1024)) '{body: ("root cause: " + (("x" * $n) // ""))}' >"$TMP/comment.json"
{
        for i in $(seq "$COMMENTS"); do
                echo next
                printf 'url = "%s/repos/acme/web/issues/7/comments"\n' "$GH"
                printf 'header = "Authorization: Bearer %s"\nheader = "Content-Type: application/json"\n' "$TOK"
                printf 'data-binary = "@%s"\noutput = "/dev/null"\nsilent\n' "$TMP/comment.json"
        done
        for i in $(seq "$READS"); do
                echo next
                printf 'url = "%s/repos/acme/web/issues/7/comments?per_page=100&page=%d"\n' "$GH" $((i % 6 + 1))
                printf 'header = "Authorization: Bearer %s"\noutput = "/dev/null"\nsilent\n' "$TOK"
        done
        for i in $(seq "$REJECTS"); do
                echo next
                printf 'url = "%s/repos/acme/web/issues/7/comments"\nrequest = "POST"\n' "$GH"
                printf 'header = "Authorization: Bearer %s"\noutput = "/dev/null"\nsilent\n' "$TOK"
        done
} | tail -n +2 >"$TMP/calls.cfg"
t0=$(date +%s.%N)
curl -K "$TMP/calls.cfg"
t1=$(date +%s.%N)
echo "filled: $COMMENTS comments of $KIB KiB, $READS reads, $REJECTS rejected in $(echo "$t1 - $t0" | bc) s"

# the probe: another sandbox, called back to back; prints each call's seconds
P=$(create '{"twins":["github"]}')
PURL=$(jq -r .per_twin.github.rest_url <<<"$P")/repos/acme/api/issues/1
PTOK=$(jq -r .session_token <<<"$P")
probe() { # probe SECONDS OUT
        local end=$(($(date +%s%N) + $1 * 1000000000))
        while (($(date +%s%N) < end)); do
                curl -s -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $PTOK" "$PURL"
        done >"$2"
}
stats() { sort -n "$1" | awk '{a[NR]=$1} END {p=int(NR*0.99); if (p < 1) p=1; printf "n=%d median=%.1f ms p99=%.1f ms max=%.1f ms", NR, 1000*a[int((NR+1)/2)], 1000*a[p], 1000*a[NR]}'; }
probe 3 "$TMP/idle"
echo "probe, nothing else running: $(stats "$TMP/idle")"

probe 15 "$TMP/during" &
PROBE=$!
sleep 1
f0=$(date +%s%N)
curl -s -o "$TMP/fin.json" -X POST -H "Authorization: Bearer $KEY" "$CONTROL/v1/sandboxes/$SID/finalize"
f1=$(date +%s%N)
wait $PROBE
RUN=$TMP/state/runs/$SID
echo "finalize: $(((f1 - f0) / 1000000)) ms wall; verdict $(jq -c .verdict "$TMP/fin.json")"
echo "run: tape $(du -b "$RUN/github.tape.jsonl" | cut -f1) bytes ($(wc -l <"$RUN/github.tape.jsonl") rows), github.final.json $(du -b "$RUN/github.final.json" | cut -f1) bytes"
grep -E "$SID: (graded|summary.md written)" "$TMP/pomed.log" | sed 's/^/pomed: /'
echo "probe, during the finalize: $(stats "$TMP/during")"
echo "pomed RSS after: $(awk '/VmHWM/ {print $2, $3}' /proc/$POMED/status) peak"
