#!/usr/bin/env bash
# scripts/walkthrough.sh itself, in a directory of its own on ephemeral ports: it leaves a
# state directory pomed and `pome doctor` accept (0750: pomed warns about nothing, doctor's
# state dir line is ok), and the run directories it prints exist after it has exited, the
# summary it names included. pomed creates a state directory 0750 by itself, so the
# walkthrough only has to leave that to it, or do as it does.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root

# pomed makes a missing state directory 0750 (its umask is 027)
"$POMED" --state-dir "$TMP/fresh/deeper/.pome" --control-listen 127.0.0.1:0 \
        --gateway-listen 127.0.0.1:0 --bus none >"$TMP/fresh.log" 2>&1 &
FRESH=$!
EXTRA_PIDS+=("$FRESH")
for _ in $(seq 200); do [[ -f $TMP/fresh/deeper/.pome/pomed.json ]] && break; sleep 0.05; done
[[ -f $TMP/fresh/deeper/.pome/pomed.json ]] || fail "pomed did not start on a new state dir: $(cat "$TMP/fresh.log")"
assert_eq "$(stat -c %a "$TMP/fresh/deeper/.pome")" 750 "the mode of a state dir pomed made"
kill -TERM "$FRESH"
wait "$FRESH" || fail "the fresh pomed did not stop cleanly"
grep -qi "world-readable\|every user may read" "$TMP/fresh.log" && fail "pomed warned about its own state dir: $(cat "$TMP/fresh.log")"
pass "pomed creates its state directory 0750"

mkdir "$TMP/wt"
# an older walkthrough's 0755 directory is closed again
mkdir -m 0755 "$TMP/wt/.pome"
set +e
POME_BUILD_DIR=$BUILD WALKTHROUGH_DIR=$TMP/wt \
        WALKTHROUGH_POMED_ARGS="--control-listen 127.0.0.1:0 --gateway-listen 127.0.0.1:0 --bus none" \
        NO_COLOR=1 bash "$SRC/scripts/walkthrough.sh" >"$TMP/walk.out" 2>"$TMP/walk.err"
rc=$?
set -e
[[ $rc -eq 0 ]] || fail "the walkthrough exited $rc: $(tail -20 "$TMP/walk.err") $(tail -20 "$TMP/walk.out")"
assert_eq "$(stat -c %a "$TMP/wt/.pome")" 750 "the walkthrough's state dir mode"
grep -qi "world-readable\|every user may read" "$TMP/wt/.pome/walkthrough.log" &&
        fail "pomed warned about the walkthrough's state dir: $(grep -i 'world-readable\|every user' "$TMP/wt/.pome/walkthrough.log")"
# every run directory it printed is still there, and the summary it names
dirs=$(sed -n 's/^Run directory: //p' "$TMP/walk.out")
assert_eq "$(wc -l <<<"$dirs")" 3 "run directories printed"
while read -r d; do
        [[ -f $d/verdict.json && -f $d/meta.json ]] || fail "the printed run directory $d is gone"
        [[ $d == "$TMP/wt/.pome-runs/"* ]] || fail "the run directory $d is not under .pome-runs/"
done <<<"$dirs"
summary=$(sed -n "s/.*The defect's summary: //p" "$TMP/walk.out")
[[ -n $summary && -s $summary ]] || fail "the summary path it printed does not exist: '$summary'"
grep -q "The graded runs stay in $TMP/wt/.pome-runs/" "$TMP/walk.out" || fail "the walkthrough does not say where the runs stay"
pass "the walkthrough: .pome 0750, no warning from pomed, its run directories and summary kept"

# pome doctor, against a pomed on the walkthrough's state dir: its state dir line is ok
cd "$TMP/wt"
"$POMED" --control-listen 127.0.0.1:0 --gateway-listen 127.0.0.1:0 --bus none >"$TMP/again.log" 2>&1 &
AGAIN=$!
EXTRA_PIDS+=("$AGAIN")
for _ in $(seq 200); do [[ -f .pome/pomed.json ]] && break; sleep 0.05; done
[[ -f .pome/pomed.json ]] || fail "pomed did not start again on the walkthrough's state dir"
out=$(env -u POME_API_URL -u POME_API_KEY -u POME_STATE_DIR "$POME" doctor 2>&1 || true)
grep -qE '^ *ok +state dir' <<<"$out" || fail "pome doctor's state dir line: $(grep 'state dir' <<<"$out")"
kill -TERM "$AGAIN"
wait "$AGAIN" || fail "pomed did not stop cleanly"
pass "pome doctor: the walkthrough's state dir is ok"
