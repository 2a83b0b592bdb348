#!/usr/bin/env bash
# All-or-nothing start: a sandbox whose second twin cannot start fails with 503
# naming that twin and the reason; no pod process and no cgroup directory of it
# remains, and usage is unchanged.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
# the shipped images offer no broken seed: the test's own are laid over a copy of them
api_available() { jq -r '.error.details.available | sort | join(",")' <<<"$BODY"; }
start_pomed
api POST /v1/sandboxes '{"twins":["slack"],"seeds":{"slack":"broken"}}'
assert_status 422 "the shipped images' broken seed"
[[ $(api_available) != *broken* ]] || fail "the shipped images offer a broken seed: $(api_available)"
assert_eq "$(api_available)" "default,hosted-task" "the slack seeds offered"
stop_pomed
start_pomed "images_dir: $(test_images_dir)"
require_cgroups_active # what is checked below is that no cgroup directory remains

tree_dirs() { find /sys/fs/cgroup -type d -name "$1" 2>/dev/null; }

create_sandbox github # one healthy sandbox stays open throughout
before=$(used)
assert_eq "$before" 1 "usage before"

# 1. The second twin's seed is rejected by its pod.
api POST /v1/sandboxes '{"twins":["github","slack"],"seeds":{"slack":"broken"}}'
assert_status 503 "a sandbox with a broken slack seed"
assert_jq .error.details.twin slack "the failing twin"
assert_jq .error.type internal_error
reason=$(jq -r .error.details.reason <<<"$BODY")
[[ -n $reason && $reason != null ]] || fail "no reason in $BODY"
detail=$(jq -r .error.details.detail <<<"$BODY")
[[ $detail == *seed* ]] || fail "the detail does not say the seed was rejected: $detail"
failed=$(ls "$TMP/state/runs" | grep -v "^$SID$" | head -1)
assert_eq "$(jq -r .state "$TMP/state/runs/$failed/sandbox.json")" failed "the failed sandbox's record"
[[ -z $(tree_dirs "$failed") ]] || fail "cgroup directories of $failed remain: $(tree_dirs "$failed")"
for p in $(pgrep -x pome-pod || true); do
        grep -q "$failed" "/proc/$p/cgroup" 2>/dev/null && fail "pod $p of $failed still runs"
done
assert_eq "$(used)" "$before" "usage after a failed start"
pass "broken seed → 503 naming slack ($reason: $detail), nothing left behind"

# 2. Any one to three of the five twins start together, and a sandbox whose last twin's
#    seed fails to load is refused whole, naming that twin, whichever twins are beside it.
TWINS=(github slack stripe gmail linear)
combos=()
for ((a = 0; a < 5; a++)); do
        combos+=("${TWINS[a]}")
        for ((b = a + 1; b < 5; b++)); do
                combos+=("${TWINS[a]} ${TWINS[b]}")
                for ((c = b + 1; c < 5; c++)); do combos+=("${TWINS[a]} ${TWINS[b]} ${TWINS[c]}"); done
        done
done
assert_eq "${#combos[@]}" 25 "subsets of one to three of five twins"
for combo in "${combos[@]}"; do
        read -ra set <<<"$combo"
        twins=$(printf '%s\n' "${set[@]}" | jq -R . | jq -sc .)
        api POST /v1/sandboxes "{\"twins\":$twins}"
        assert_status 201 "a sandbox of $combo"
        sid=$(jq -r .session_id <<<"$BODY")
        assert_eq "$(jq -c '.per_twin | keys | sort' <<<"$BODY")" "$(jq -c sort <<<"$twins")" "$combo: its twins"
        discard "$sid"
        last=${set[-1]}
        [[ $last == gmail || $last == linear ]] || continue
        api POST /v1/sandboxes "{\"twins\":$twins,\"seeds\":{\"$last\":\"broken\"}}"
        assert_status 503 "$combo with a broken $last seed"
        assert_jq .error.details.twin "$last"
        failed=$(ls -t "$TMP/state/runs" | head -1)
        [[ -z $(tree_dirs "$failed") ]] || fail "cgroup directories of $failed ($combo) remain"
done
assert_eq "$(used)" "$before" "usage after the five twins' subsets"
pass "every subset of one to three of the five twins starts; a broken gmail or linear seed fails it whole"

# 3. The second twin's pod is killed by the OOM killer while loading (a seed too big
#    for a 6 MiB limit is generated into a test images dir).
imgs=$(test_images_dir)
jq -n '{channels: [{id: "C001", name: "general", messages: [range(25000) |
        {ts: "1700000000.\(1000000 + . | tostring | .[1:])", user: "U001", text: ("x" * 200)}]}]}' \
        >"$imgs/slack/seeds/huge.json"
stop_pomed
start_pomed "images_dir: $imgs" "pod:" "  memory_max: 6M"
api POST /v1/sandboxes '{"twins":["github","slack"],"seeds":{"slack":"huge"}}'
assert_status 503 "a sandbox whose slack pod runs out of memory"
assert_jq .error.details.twin slack
assert_jq .error.details.reason oom_killed
assert_eq "$(used)" 0 "usage after an OOM-killed start"
failed=$(ls -t "$TMP/state/runs" | head -1)
[[ -z $(tree_dirs "$failed") ]] || fail "cgroup directories of $failed remain"
pass "OOM-killed pod → 503 naming slack (oom_killed), nothing left behind"

# pomed keeps serving
create_sandbox github slack
discard "$SID"
pass "pomed still starts sandboxes afterwards"
