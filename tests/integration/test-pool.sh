#!/usr/bin/env bash
# The warm pod pool: pomed keeps pool_size pods per twin spawned and waiting for a seed;
# a create hands them out (the sandbox's pod was running before the create), the pool
# refills after the reply, an idle pod that dies is replaced, a pooled pod whose seed is
# refused fails the create as any pod would (503 naming the twin, nothing left), pool_size
# 0 turns it off, and a drain leaves no pod and no cgroup.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root

pool() { curl -s "$CONTROL/healthz" | jq -c "[.isolation.pool.$1.idle, .isolation.pool.$1.size]"; }
wait_pool() { # wait_pool TWIN IDLE
        for _ in $(seq 200); do
                [[ $(pool "$1") == "[$2,"* ]] && return 0
                sleep 0.05
        done
        fail "the $1 pool did not reach $2 idle pods: $(pool "$1")"
}
# the pome-pod processes of this pomed whose cgroup is one of its pods' (our tree)
tree_pods() {
        local tree
        tree=$(curl -s "$CONTROL/healthz" | jq -r .isolation.cgroups.tree)
        # /proc/PID/cgroup: "N:memory:/path" under v1, "0::/path" under v2
        local pat="0::${tree#/sys/fs/cgroup}/pod-"
        [[ -d /sys/fs/cgroup/memory ]] && pat="memory:${tree#/sys/fs/cgroup/memory}/pod-"
        for p in $(pgrep -x pome-pod || true); do
                if grep -q "$pat" "/proc/$p/cgroup" 2>/dev/null; then
                        echo "$p"
                fi
        done | sort -n
}

start_pomed "images_dir: $(test_images_dir)"
require_cgroups_active # its pods are found by their cgroups
TWINS=(github slack stripe gmail linear)
for t in "${TWINS[@]}"; do wait_pool "$t" 2; done
assert_eq "$(tree_pods | wc -l)" $((2 * ${#TWINS[@]})) "idle pods at start"
idle_before=$(tree_pods | tr '\n' ' ')
pass "the pool fills on its own: 2 idle pods per twin"

create_sandbox github slack
gh=$(jq -r .per_twin.github.pod.pid <<<"$CREATED")
sl=$(jq -r .per_twin.slack.pod.pid <<<"$CREATED")
[[ " $idle_before " == *" $gh "* && " $idle_before " == *" $sl "* ]] ||
        fail "the sandbox's pods ($gh, $sl) are not pool pods ($idle_before)"
twin_call GET "$(rest_url github)/repos/acme/api/issues/1" "$TOKEN"
assert_status 200 "a call to a pooled pod"
wait_pool github 2
wait_pool slack 2
discard "$SID"
pass "a create takes warm pods (running before it), the pool refills"

victim=$(tree_pods | head -1)
kill -9 "$victim"
for _ in $(seq 100); do [[ -d /proc/$victim ]] || break; sleep 0.05; done
for t in "${TWINS[@]}"; do wait_pool "$t" 2; done
grep -q "pool: an idle .* pod (pid $victim) signal:SIGKILL" "$TMP/pomed.log" ||
        fail "no log line for the idle pod killed from outside"
pass "an idle pod killed from outside is said and replaced"

api POST /v1/sandboxes '{"twins":["github","slack"],"seeds":{"slack":"broken"}}'
assert_status 503 "a pooled slack pod whose seed is refused"
assert_jq .error.details.twin slack
[[ $(jq -r .error.details.detail <<<"$BODY") == *seed* ]] || fail "the detail does not say the seed: $BODY"
assert_eq "$(used)" 0 "usage after the failed start"
for t in "${TWINS[@]}"; do wait_pool "$t" 2; done
assert_eq "$(tree_pods | wc -l)" $((2 * ${#TWINS[@]})) \
        "pods after the failed start (the pool's own, nothing else)"
pass "a pooled pod refusing its seed fails the create, all or nothing; the pool refills"

pids=$(tree_pods)
stop_pomed || fail "pomed did not drain cleanly"
for p in $pids; do [[ ! -d /proc/$p ]] || fail "idle pod $p outlived the drain"; done
pass "a drain takes the idle pods with it"

start_pomed "pool_size:" "  github: 1" "  slack: 0" "  stripe: 0" "  gmail: 0" "  linear: 0"
wait_pool github 1
assert_eq "$(pool slack)" "[0,0]" "slack: no pool"
tree=$(curl -s "$CONTROL/healthz" | jq -r .isolation.cgroups.tree)
create_sandbox slack
assert_eq "$(used)" 1 "a sandbox without a pool"
discard "$SID"
stop_pomed || fail "pomed did not stop"
[[ -z $(find "$tree" -mindepth 1 -type d 2>/dev/null) ]] ||
        fail "cgroups remain below the tree after the stop: $(find "$tree" -mindepth 1 -type d)"
pass "pool_size per twin (0 turns it off); a stop leaves no cgroup"

sed -i '/^pool_size:/,$d' "$TMP/pomed.conf"
echo "pool_size: {nosuchtwin: 1}" >>"$TMP/pomed.conf"
rc=0
out=$(timeout 20 "$POMED" --config "$TMP/pomed.conf" 2>&1) || rc=$?
((rc != 0 && rc != 124)) || fail "pomed started with pool_size naming no twin (rc $rc)"
grep -q "pool_size.nosuchtwin: no such twin" <<<"$out" || fail "the refusal does not name it: $out"
pass "pool_size naming an unknown twin is refused at start"
