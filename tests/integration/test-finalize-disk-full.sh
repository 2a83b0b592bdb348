#!/usr/bin/env bash
# A finalize whose run cannot be written (runs/ on a full tmpfs): the run is not graded —
# no verdict about the agent from files that are not whole — and verdict_error says
# "storage: …", naming what could not be written; no run file is left cut short (each is
# whole or absent). Once there is room again the same pomed finalizes and grades another
# run.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root

mkdir -p "$TMP/state/runs"
mount -t tmpfs -o size=1m tmpfs "$TMP/state/runs" || skip "cannot mount a tmpfs (needs CAP_SYS_ADMIN)"
trap 'rc=$?; umount -l "$TMP/state/runs" 2>/dev/null; (exit $rc); cleanup' EXIT
start_pomed
TASK=$(cat "$SRC/examples/triage/task.md")
create_task() {
        api POST /v1/sandboxes "$(jq -nc --arg task "$TASK" '{twins: ["github", "slack"], task_markdown: $task}')"
        assert_status 201 "create with a task"
        SID=$(jq -r .session_id <<<"$BODY")
}
create_task
FULL=$SID
# fill the disk: nothing is left for the finals and the seeds
dd if=/dev/zero of="$TMP/state/runs/filler" bs=4k 2>/dev/null || true
api POST "/v1/sandboxes/$FULL/finalize"
assert_status 200 "finalize on a full disk"
assert_jq .verdict null "no verdict from a run that could not be written"
[[ $(jq -r .verdict_error <<<"$BODY") == "storage: cannot write "* ]] ||
        fail "verdict_error does not say storage: $BODY"
pass "a finalize on a full disk: not graded, verdict_error '$(jq -r .verdict_error <<<"$BODY")'"
for f in "$TMP/state/runs/$FULL"/*.json; do
        [[ -e $f ]] || continue
        jq -e . "$f" >/dev/null || fail "$(basename "$f") is left cut short ($(stat -c %s "$f") bytes)"
done
ls -a "$TMP/state/runs/$FULL" | grep -q '^\.#' && fail "a temporary file is left: $(ls -a "$TMP/state/runs/$FULL")"
pass "every run file is whole or absent, and no temporary is left"
curl -s "$CONTROL/healthz" >"$TMP/healthz"
assert_eq "$(jq -c '.state_dir | [.full, .free_bytes < 16777216]' "$TMP/healthz")" "[true,true]" \
        "/healthz says the state directory is full"
curl -s -H "Authorization: Bearer $API_KEY" "$CONTROL/metrics" | grep -qx 'pome_state_dir_full 1' ||
        fail "/metrics does not say the state directory is full"
"$POME" doctor >"$TMP/doctor.txt" 2>&1 || true
grep "state room" "$TMP/doctor.txt" | grep -q "cannot be written" ||
        fail "pome doctor does not say the state directory is full: $(cat "$TMP/doctor.txt")"
pass "/healthz, /metrics and pome doctor say the state directory is full"

rm -f "$TMP/state/runs/filler"
create_task
api POST "/v1/sandboxes/$SID/finalize"
assert_status 200 "finalize with room again"
assert_jq .verdict_error null "a run written whole"
[[ $(jq -r .verdict.state <<<"$BODY") =~ ^(pass|fail|incomplete)$ ]] || fail "no verdict: $BODY"
pass "with room again the same pomed grades a run"
