#!/usr/bin/env bash
# pomed without root names the missing layers in a start-up warning and in /healthz —
# never silently. Without cgroups a pod would have no memory or pids limit: creates are
# refused (503 isolation_unavailable, with the reason and the fix) unless the operator
# says allow_unlimited_pods: true; then it serves, and its pods still get seccomp and
# no_new_privs.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root # to become nobody
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
chown nobody "$TMP"
mkdir -p "$TMP/state" && chown nobody "$TMP/state"
# what nobody runs and reads, where nobody can reach it (the clone may be in a 0700 home)
mkdir -p "$TMP/bin"
cp "$POMED" "$POD" "$TMP/bin/"
cp -r "$SRC/sandbox-images" "$SRC/policies" "$TMP/"
chmod -R a+rX "$TMP/bin" "$TMP/sandbox-images" "$TMP/policies"
POMED=$TMP/bin/pomed
cat >"$TMP/pomed.conf" <<CONF
control_listen: 127.0.0.1:0
gateway_listen: 127.0.0.1:0
state_dir: $TMP/state
bus: none
pod_exec: $TMP/bin/pome-pod
images_dir: $TMP/sandbox-images
policies_dir: $TMP/policies
CONF
start_as_nobody() {
        rm -f "$TMP/state/pomed.json"
        setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
                "$POMED" --config "$TMP/pomed.conf" >>"$TMP/pomed.log" 2>&1 &
        POMED_PID=$!
        for _ in $(seq 200); do [[ -f $TMP/state/pomed.json ]] && break; sleep 0.05; done
        [[ -f $TMP/state/pomed.json ]] || fail "pomed as nobody did not start"
        CONTROL=$(jq -r .control_url "$TMP/state/pomed.json")
        API_KEY=$(head -1 "$TMP/state/api-key")
}
start_as_nobody

grep -q "isolation layers missing: namespaces and unprivileged pod user (pomed is not root), cgroups" \
        "$TMP/pomed.log" || fail "no start-up warning naming the missing layers"
twin_call GET "$CONTROL/healthz" ""
assert_jq .missing_layers "namespaces and unprivileged pod user (pomed is not root), cgroups"
api POST /v1/sandboxes '{"twins":["github"]}'
assert_status 503 "a create when pods would get no cgroup"
assert_jq .error.type isolation_unavailable
jq -e '.error.message | test("allow_unlimited_pods") and test("memory and pids")' <<<"$BODY" >/dev/null ||
        fail "the refusal does not say why and what to do: $BODY"
grep -q "Creates are refused" "$TMP/pomed.log" || fail "the start-up warning does not say creates are refused"
POME_API_URL=$CONTROL POME_API_KEY=$API_KEY "$POME" doctor >"$TMP/doctor" 2>&1 || true
grep -E '^missing +cgroups' "$TMP/doctor" | grep -q 'creates are refused' ||
        fail "pome doctor does not say creates are refused: $(grep cgroups "$TMP/doctor")"
grep -A2 -E '^missing +cgroups' "$TMP/doctor" | grep -q 'not root' ||
        fail "pome doctor's fix is not the one for a pomed that is not root: $(grep -A2 cgroups "$TMP/doctor")"
api GET /v1/usage
assert_jq .sessions_used 0 "no slot spent by the refusal"
pass "without cgroups creates are refused, before a slot is spent, with the reason and the fix"

# the operator's opt-in: allow_unlimited_pods: true (a restart)
stop_pomed || fail "pomed as nobody did not stop cleanly"
echo "allow_unlimited_pods: true" >>"$TMP/pomed.conf"
start_as_nobody
create_sandbox github
pid=$(jq -r .per_twin.github.pod.pid <<<"$CREATED")
assert_eq "$(awk '$1 == "Seccomp:" { print $2 }' "/proc/$pid/status")" 2 "Seccomp of an unprivileged pod"
assert_eq "$(awk '$1 == "NoNewPrivs:" { print $2 }' "/proc/$pid/status")" 1 "NoNewPrivs"
twin_call GET "$(rest_url github)/repos/acme/api/issues/1" "$TOKEN"
assert_status 200 "a twin call"
discard "$SID"
pass "pomed as nobody serves, names what is missing, and still filters its pods"
