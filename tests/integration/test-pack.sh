#!/usr/bin/env bash
# pod.pack_after: a pod that gets no call for that long packs its world into compact JSON
# and gives its heap back; the next call unpacks it. The world after the pack is the
# world before it (byte for byte through /_pome/state), the same pod serves on (no
# restart), writes go on and are taped, and the pod's anonymous memory drops. "off" keeps
# every world a tree.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root

pss_anon() { awk '$1 == "Pss_Anon:" { print $2 }' "/proc/$1/smaps_rollup"; }
# grow: N comments on issue 1, so the world has something to pack (~150 KB of JSON)
grow() {
        local url=$1 n=$2 i
        for ((i = 0; i < n; i++)); do
                printf '{"body":"comment %d of the pack test, long enough to weigh a little"}\n' "$i"
        done | while read -r body; do
                twin_call POST "$url/repos/acme/api/issues/1/comments" "$TOKEN" "$body"
                [[ $STATUS == 201 ]] || fail "comment answered $STATUS: $BODY"
        done
}

# idle_github TWIN…: a sandbox of TWIN… whose GitHub world grows, then the GitHub pod's
# Pss_Anon right after a call (awake: its world is a tree) and after 1.2 s without one
idle_github() {
        create_sandbox "$@"
        gh_url=$(rest_url github)
        pid=$(pod_pid github)
        grow "$gh_url" 300
        world_state "$gh_url" "$TMP/before.json"
        awake=$(pss_anon "$pid")
        sleep 1.2
        idle=$(pss_anon "$pid")
}

start_pomed "pod:" "  pack_after: 300ms"
idle_github github slack
packed=$idle
((awake - packed >= 100)) ||
        fail "the idle pod's anonymous memory went from $awake to $packed KiB (expected 100 KiB less)"
pass "an idle pod packs its world: Pss_Anon $awake → $packed KiB"

world_state "$gh_url" "$TMP/after.json"
cmp -s "$TMP/before.json" "$TMP/after.json" ||
        fail "the world after the pack differs: $(diff "$TMP/before.json" "$TMP/after.json" | head -5)"
assert_eq "$(pod_pid github)" "$pid" "the github pod after the pack (same process)"
twin_call PATCH "$gh_url/repos/acme/api/issues/1" "$TOKEN" '{"title":"after the pack"}'
assert_status 200 "a write to the unpacked world"
assert_jq .comments 300 "the issue's comments after the pack"
twin_call GET "$gh_url/repos/acme/api/issues/1" "$TOKEN"
assert_jq .title "after the pack"
sleep 1.2
twin_call GET "$gh_url/repos/acme/api/issues/1/comments?per_page=1&page=300" "$TOKEN"
assert_status 200 "a read after a second pack"
assert_jq '.[0].body' "comment 299 of the pack test, long enough to weigh a little"
curl -s -H "Authorization: Bearer $TOKEN" "$gh_url/_pome/events?limit=1000" >"$TMP/events.json"
assert_eq "$(jq '[.[] | select(.tool == "issue_write" and .status == 200 and .state_mutation)] | length' "$TMP/events.json")" 1 \
        "taped updates after the pack"
pass "the world comes back the same, the same pod serves and writes on, and they are taped"

sl_url=$(rest_url slack)
sl_pid=$(pod_pid slack)
twin_call POST "$sl_url/api/chat.postMessage" "$TOKEN" '{"channel":"C_GENERAL","text":"packed?"}'
sleep 1.2
twin_call POST "$sl_url/api/conversations.history" "$TOKEN" '{"channel":"C_GENERAL","limit":1}'
assert_jq '.messages[0].text' "packed?" "slack's last message after a pack"
assert_eq "$(pod_pid slack)" "$sl_pid" "the slack pod after the pack"
pass "a slack world comes back after an idle pack too"
discard "$SID"

# A world too small to pack (Stripe's default, under a page) is left a tree when the pod
# goes idle; once calls grow it, the next idle spell packs it.
create_sandbox stripe
st_pid=$(pod_pid stripe)
key=$(jq -r .provider_credentials.stripe.api_key <<<"$CREATED")
base=$(jq -r .provider_credentials.stripe.api_base <<<"$CREATED")
sleep 0.6 # an idle spell with nothing worth packing
for i in $(seq 40); do
        code=$(curl -s -o /dev/null -w '%{http_code}' -u "$key:" "$base/v1/customers" \
                -d "name=Customer $i of the pack test" -d "email=c$i@example.com" \
                -d "description=a customer with enough words to weigh in the world")
        [[ $code == 200 ]] || fail "customer $i answered $code"
done
awake=$(pss_anon "$st_pid")
sleep 1.2
idle=$(pss_anon "$st_pid")
((awake - idle >= 40)) ||
        fail "the grown Stripe world did not pack: Pss_Anon $awake → $idle KiB (expected 40 KiB less)"
assert_eq "$(curl -s -u "$key:" "$base/v1/customers?limit=100" | jq '.data | length')" 40 \
        "Stripe customers after the pack"
pass "a world that grew past a page packs at the next idle spell ($awake → $idle KiB)"
stop_pomed || fail "pomed did not stop"

start_pomed "pod:" "  pack_after: off"
idle_github github
tree=$idle
((awake - tree < 100)) || fail "pack_after: off, yet the pod's memory went from $awake to $tree KiB"
pass "pack_after: off keeps the world a tree ($awake → $tree KiB)"
