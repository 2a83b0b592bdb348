#!/usr/bin/env bash
# Finalizes on a full disk (runs/ on a tmpfs with a size):
#  - with no room for the finals, the finalize is refused 507 insufficient_storage before
#    anything is stopped: the sandbox stays open, and once there is room the same sandbox
#    finalizes and is graded (nothing lost);
#  - with room at the start but not for the finals (a large world), the run is not graded —
#    no verdict about the agent from files that are not whole — and verdict_error says
#    "storage: …", naming what could not be written; every run file is whole or absent;
#  - /healthz, /metrics and pome doctor say the directory is full; with room again the same
#    pomed grades another run.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root

mkdir -p "$TMP/state/runs"
mount -t tmpfs -o size=8m tmpfs "$TMP/state/runs" || skip "cannot mount a tmpfs (needs CAP_SYS_ADMIN)"
trap 'rc=$?; umount -l "$TMP/state/runs" 2>/dev/null || true; cleanup $rc' EXIT
start_pomed
TASK=$(cat "$SRC/examples/triage/task.md")
create_task() {
        api POST /v1/sandboxes "$(jq -nc --arg task "$TASK" '{twins: ["github", "slack"], task_markdown: $task}')"
        assert_status 201 "create with a task"
        SID=$(jq -r .session_id <<<"$BODY")
        GH=$(jq -r .per_twin.github.rest_url <<<"$BODY")
        TOKEN=$(jq -r .session_token <<<"$BODY")
}
# fill_leaving BYTES: a filler in runs/ that leaves about BYTES free
fill_leaving() {
        local avail
        rm -f "$TMP/state/runs/filler"
        avail=$(df --output=avail -B1 "$TMP/state/runs" | tail -1)
        if (($1 == 0)); then
                dd if=/dev/zero of="$TMP/state/runs/filler" bs=4k 2>/dev/null || true
        else
                fallocate -l $((avail - $1)) "$TMP/state/runs/filler"
        fi
}
runs_whole() { # runs_whole SID: every run file whole JSON or absent, no temporary left
        for f in "$TMP/state/runs/$1"/*.json; do
                [[ -e $f ]] || continue
                jq -e . "$f" >/dev/null || fail "$(basename "$f") is left cut short ($(stat -c %s "$f") bytes)"
        done
        ls -a "$TMP/state/runs/$1" | grep -q '^\.#' && fail "a temporary file is left: $(ls -a "$TMP/state/runs/$1")"
        return 0
}

# ---- no room: refused, the sandbox stays open ----
create_task
FULL=$SID
twin_call POST "$GH/repos/acme/api/issues/1/comments" "$TOKEN" '{"body":"before the disk filled"}'
assert_status 201 "a write before the disk fills"
fill_leaving 0
api POST "/v1/sandboxes/$FULL/finalize"
assert_status 507 "finalize with no room for the finals"
assert_jq .error.type insufficient_storage
jq -e '.error.message | test("stays open")' <<<"$BODY" >/dev/null || fail "the refusal does not say the sandbox stays open: $BODY"
api GET "/v1/sandboxes/$FULL"
[[ $(jq -r .state <<<"$BODY") =~ ^(ready|running)$ ]] || fail "the refused finalize ended the sandbox: $BODY"
runs_whole "$FULL"
pass "a finalize with no room: 507 before anything is stopped, the sandbox stays open"
curl -s "$CONTROL/healthz" >"$TMP/healthz"
assert_eq "$(jq -c '.state_dir | [.full, .free_bytes < 16777216]' "$TMP/healthz")" "[true,true]" \
        "/healthz says the state directory is full"
# read whole first: grep -q stopping early would make curl fail (pipefail)
curl -s -H "Authorization: Bearer $API_KEY" "$CONTROL/metrics" >"$TMP/metrics"
grep -qx 'pome_state_dir_full 1' "$TMP/metrics" ||
        fail "/metrics does not say the state directory is full: $(grep pome_state_dir "$TMP/metrics")"
"$POME" doctor >"$TMP/doctor.txt" 2>&1 || true
grep "state room" "$TMP/doctor.txt" | grep -q "cannot be written" ||
        fail "pome doctor does not say the state directory is full: $(cat "$TMP/doctor.txt")"
pass "/healthz, /metrics and pome doctor say the state directory is full"

rm -f "$TMP/state/runs/filler"
api POST "/v1/sandboxes/$FULL/finalize"
assert_status 200 "the same finalize with room again"
assert_jq .verdict_error null "the run written whole"
[[ $(jq -r .verdict.state <<<"$BODY") =~ ^(pass|fail|incomplete)$ ]] || fail "no verdict: $BODY"
api GET "/v1/sandboxes/$FULL/state?twin=github"
assert_status 200 "the final state of the sandbox refused before"
jq -e '[.. | strings | select(. == "before the disk filled")] | length > 0' <<<"$BODY" >/dev/null ||
        fail "the write made before the disk filled is not in the final state"
pass "with room again the same sandbox finalizes and is graded, its world whole"

# ---- room at the start, not for the finals: not graded, said so, nothing cut short ----
create_task
BIG=$SID
body=$(head -c 7000 /dev/zero | tr '\0' x)
for i in $(seq 220); do
        twin_call POST "$GH/repos/acme/api/issues/1/comments" "$TOKEN" "{\"body\":\"$i $body\"}"
        [[ $STATUS == 201 ]] || fail "comment $i answered $STATUS: $BODY"
done
fill_leaving $((1200 * 1024)) # above the 1 MiB finalize needs at least, below a 1.5 MB world
api POST "/v1/sandboxes/$BIG/finalize"
assert_status 200 "finalize that runs out of room midway"
assert_jq .verdict null "no verdict from a run that could not be written"
[[ $(jq -r .verdict_error <<<"$BODY") == "storage: cannot write "* ]] ||
        fail "verdict_error does not say storage: $BODY"
runs_whole "$BIG"
pass "a finalize that ran out of room: not graded, verdict_error '$(jq -r .verdict_error <<<"$BODY")', every run file whole or absent"

rm -f "$TMP/state/runs/filler"
create_task
api POST "/v1/sandboxes/$SID/finalize"
assert_status 200 "finalize with room again"
assert_jq .verdict_error null "a run written whole"
[[ $(jq -r .verdict.state <<<"$BODY") =~ ^(pass|fail|incomplete)$ ]] || fail "no verdict: $BODY"
pass "with room again the same pomed grades a run"
