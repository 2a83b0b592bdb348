#!/usr/bin/env bash
# The wall clock stepped under a running pomed (tests/helpers/clockshim.c, LD_PRELOADed into
# pomed alone: the host's clock is not touched). +1 h, -1 h and +10 years end no open
# sandbox and delete no kept run; a backward step leaves no record ended before it was
# created; a restart with the clock still 10 years ahead deletes nothing either. The boot
# clock still rules: the lifetime ends a sandbox on time, and retention deletes a run once it
# is old on it. Last, a pomed stalled (SIGSTOP) past a sandbox's idle timeout answers the call
# that waited, instead of expiring the sandbox as idle.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
SHIM=$BUILD/tests/libpome-clockshim.so
[[ -f $SHIM ]] || skip "no $SHIM (built with the tests)"
OFF=$TMP/clock-offset
echo 0 >"$OFF"
export POME_CLOCKSHIM_FILE=$OFF
# only pomed preloads the shim; ASan's runtime need not come first in its library list
shimmed_pomed() {
        LD_PRELOAD=$SHIM ASAN_OPTIONS=$ASAN_OPTIONS:verify_asan_link_order=0 start_pomed "$@"
}
step() { # step SECONDS: the wall clock pomed reads is now SECONDS ahead of the host's
        echo "$1" >"$OFF"
        sleep 0.2 # the shim reads the file again within 50 ms
}
conf=("limits:" "  lifetime: 25s" "  idle_timeout: 20s" "  retention: 20s")
shimmed_pomed "${conf[@]}"
YEARS10=$((10 * 366 * 86400))

# a kept run (finalized) and an open sandbox
create_sandbox github
KEPT=$SID
api POST "/v1/sandboxes/$KEPT/finalize"
assert_status 200 "finalize"
create_sandbox github slack
OPEN=$SID OPEN_TOKEN=$TOKEN OPEN_URL=$(rest_url github)
created=$(jq -r .created_at <<<"$CREATED")

call_open() { # the open sandbox answers as open
        twin_call GET "$OPEN_URL/repos/acme/api/issues/1" "$OPEN_TOKEN"
        assert_status 200 "$1: a call in the open sandbox"
        api GET "/v1/sandboxes/$OPEN"
        assert_jq .state running "$1: the open sandbox"
}
kept_run() {
        api GET "/v1/sandboxes/$KEPT"
        assert_status 200 "$1: the kept run's record"
        [[ -f $TMP/state/runs/$KEPT/sandbox.json ]] || fail "$1: the kept run's directory is gone"
}

call_open "before any step"
step 3600
call_open "+1 h"
kept_run "+1 h"
pass "+1 h: the open sandbox still serves (its token's exp passed on the wall clock only)"

step "$YEARS10"
sleep 3 # retention passes (every 2 s for a 20 s retention) see a run 10 years old
call_open "+10 years"
kept_run "+10 years"
pass "+10 years: no sandbox ended, no kept run deleted"

step -3600
call_open "-1 h"
discard "$OPEN"
api GET "/v1/sandboxes/$OPEN"
ended=$(jq -r .ended_at <<<"$BODY")
(($(date -d "$ended" +%s) >= $(date -d "$created" +%s))) ||
        fail "-1 h: ended_at $ended is before created_at $created"
pass "-1 h: the sandbox still served; stopped, it ended at $ended, not before it was created ($created)"

# a restart with the clock 10 years ahead: the pomed clock goes on from where it stood
step "$YEARS10"
stop_pomed || fail "pomed did not stop cleanly"
shimmed_pomed "${conf[@]}"
sleep 2
kept_run "restarted +10 years"
pass "restarted with the wall clock 10 years ahead: the kept run is still there"

# the boot clock still ends things: lifetime (25 s) and retention (20 s)
create_sandbox github
LIFE=$SID LIFE_TOKEN=$TOKEN LIFE_URL=$(rest_url github)
for _ in $(seq 70); do
        twin_call GET "$LIFE_URL/repos/acme/api/issues/1" "$LIFE_TOKEN"
        [[ $STATUS == 410 ]] && break
        sleep 0.5
done
assert_status 410 "the sandbox after its lifetime, the wall clock 10 years ahead"
assert_jq .error.details.reason lifetime
for _ in $(seq 40); do
        api GET "/v1/sandboxes/$KEPT"
        [[ $STATUS == 404 ]] && break
        sleep 0.5
done
assert_status 404 "the kept run after its retention on the boot clock"
[[ ! -d $TMP/state/runs/$KEPT ]] || fail "the run directory outlived its record"
pass "on the boot clock the lifetime still ends a sandbox and retention still deletes a run"
stop_pomed || fail "pomed did not stop cleanly"

# a stalled pomed: the idle clock comes due while it is stopped, with a call waiting
echo 0 >"$OFF"
start_pomed "limits:" "  idle_timeout: 2s"
create_sandbox github
twin_call GET "$(rest_url github)/repos/acme/api/issues/1" "$TOKEN"
assert_status 200 "a call before the stall"
kill -STOP "$POMED_PID"
sleep 1
curl -s -o "$TMP/waited" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
        "$(rest_url github)/repos/acme/api/issues/1" >"$TMP/waited.status" &
waiter=$!
sleep 4 # past the idle timeout, pomed stopped
kill -CONT "$POMED_PID"
wait "$waiter" || fail "the waiting call failed: $(cat "$TMP/waited")"
assert_eq "$(cat "$TMP/waited.status")" 200 "the call that waited out the stall: $(cat "$TMP/waited")"
api GET "/v1/sandboxes/$SID"
assert_jq .state running "the sandbox after the stall"
grep -q "pomed was stalled" "$TMP/pomed.log" || fail "the stall is not in the log"
pass "a stall past the idle timeout: the waiting call is answered, the sandbox stays running"
