#!/usr/bin/env bash
# pomed without root still serves, with the missing layers named in a start-up
# warning and in /healthz — never silently. Its pods still get seccomp and
# no_new_privs.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root # to become nobody
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
chown nobody "$TMP"
mkdir -p "$TMP/state" && chown nobody "$TMP/state"
cat >"$TMP/pomed.conf" <<CONF
control_listen: 127.0.0.1:0
gateway_listen: 127.0.0.1:0
state_dir: $TMP/state
bus: none
CONF
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
        "$POMED" --config "$TMP/pomed.conf" >>"$TMP/pomed.log" 2>&1 &
POMED_PID=$!
for _ in $(seq 200); do [[ -f $TMP/state/pomed.json ]] && break; sleep 0.05; done
[[ -f $TMP/state/pomed.json ]] || fail "pomed as nobody did not start"
CONTROL=$(jq -r .control_url "$TMP/state/pomed.json")
API_KEY=$(head -1 "$TMP/state/api-key")

grep -q "isolation layers missing: namespaces and unprivileged pod user (pomed is not root), cgroups" \
        "$TMP/pomed.log" || fail "no start-up warning naming the missing layers"
twin_call GET "$CONTROL/healthz" ""
assert_jq .missing_layers "namespaces and unprivileged pod user (pomed is not root), cgroups"
create_sandbox github
pid=$(jq -r .per_twin.github.pod.pid <<<"$CREATED")
assert_eq "$(awk '$1 == "Seccomp:" { print $2 }' "/proc/$pid/status")" 2 "Seccomp of an unprivileged pod"
assert_eq "$(awk '$1 == "NoNewPrivs:" { print $2 }' "/proc/$pid/status")" 1 "NoNewPrivs"
twin_call GET "$(rest_url github)/repos/acme/api/issues/1" "$TOKEN"
assert_status 200 "a twin call"
discard "$SID"
pass "pomed as nobody serves, names what is missing, and still filters its pods"
