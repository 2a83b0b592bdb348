#!/usr/bin/env bash
# pomed --check-config: the main file and its FILE.d/*.conf drop-ins, applied in name
# order, validated without starting anything; a bad drop-in is named FILE:LINE; a running
# pomed applies the same drop-ins; and a second pomed on its port says how to choose another.
source "$(dirname "$0")/lib.sh"

CONF=$TMP/pomed.conf
mkdir -p "$CONF.d"
printf 'control_listen: 127.0.0.1:0\ngateway_listen: 127.0.0.1:0\nstate_dir: %s/state\nbus: none\n' "$TMP" >"$CONF"
printf 'teams:\n  - id: a\n    sessions_quota: 1\n' >"$CONF.d/10-a.conf"
printf 'teams:\n  - id: local\n    sessions_quota: 4\nlimits:\n  idle_timeout: 2m\n' >"$CONF.d/20-b.conf"
printf 'this: is not read\n' >"$CONF.d/README"

out=$("$POMED" --config "$CONF" --check-config) || fail "--check-config: $out"
grep -q "^configuration valid: $CONF + $CONF.d/10-a.conf + $CONF.d/20-b.conf$" <<<"$out" ||
        fail "the files applied: $out"
grep -q "team local: sessions_quota 4" <<<"$out" || fail "the last drop-in's teams: $out"
! grep -q "team a:" <<<"$out" || fail "teams of 10-a should be replaced by 20-b's: $out"
[[ ! -e $TMP/state ]] || fail "--check-config created the state directory"
pass "--check-config: main file + drop-ins in name order (README ignored), nothing started"

printf 'limits:\n  lifetime: 2h\n' >"$CONF.d/30-bad.conf"
status=0
out=$("$POMED" --config "$CONF" --check-config 2>&1) || status=$?
assert_eq "$status" 1 "--check-config with a bad drop-in"
grep -q "$CONF.d/30-bad.conf:2: limits.lifetime: must be between 1s and 30m" <<<"$out" ||
        fail "the error does not name the drop-in's line: $out"
printf 'bus: none\nlimits:\n  drain_timeout: 5s\n  lifetim: 5m\n' >"$CONF.d/30-bad.conf"
status=0
out=$("$POMED" --config "$CONF" --check-config 2>&1) || status=$?
assert_eq "$status" 1 "--check-config with a misspelt key"
grep -q "$CONF.d/30-bad.conf:4: unknown key 'limits.lifetim'" <<<"$out" ||
        fail "the unknown key is not named FILE:LINE: $out"
rm "$CONF.d/30-bad.conf"
printf 'pod_user: no-such-user-here\n' >"$CONF.d/40-user.conf"
status=0
out=$("$POMED" --config "$CONF" --check-config 2>&1) || status=$?
assert_eq "$status" 1 "--check-config with a missing pod user"
grep -q "pod_user 'no-such-user-here' does not exist" <<<"$out" || fail "the error: $out"
rm "$CONF.d/40-user.conf"
pass "a bad drop-in (FILE:LINE of the value and of an unknown key) and a missing pod user are refused, named"

# The running pomed reads the same drop-ins.
"$POMED" --config "$CONF" >>"$TMP/pomed.log" 2>&1 &
POMED_PID=$!
for _ in $(seq 1 200); do [[ -f $TMP/state/pomed.json ]] && break; sleep 0.05; done
CONTROL=$(jq -r .control_url "$TMP/state/pomed.json")
API_KEY=$(head -1 "$TMP/state/api-key")
api GET /v1/usage
assert_jq .sessions_quota 4 "the drop-in's quota in the running pomed"
pass "pomed applies the drop-ins it was checked with"

# A second pomed on the first one's control port: refused, saying how to choose another.
port=${CONTROL##*:}
status=0
timeout 20 "$POMED" --state-dir "$TMP/second" --control-listen "127.0.0.1:$port" \
        --gateway-listen 127.0.0.1:0 --bus none >"$TMP/second.log" 2>&1 || status=$?
[[ $status -ne 0 ]] || fail "a second pomed on a busy port started"
grep -q "cannot listen on 127.0.0.1:$port (control API): Address already in use" "$TMP/second.log" ||
        fail "the busy port is not named: $(cat "$TMP/second.log")"
grep -q "choose another address for the control API with control_listen: in the configuration .* or --control-listen ADDRESS:PORT; port 0 picks a free one" "$TMP/second.log" ||
        fail "pomed does not say how to choose another port: $(cat "$TMP/second.log")"
pass "a busy port: named, with control_listen / --control-listen to choose another"
