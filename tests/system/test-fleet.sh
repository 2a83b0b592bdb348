#!/usr/bin/env bash
# A fleet on one machine (issue 29): three hosts as network namespaces on a bridge, a
# 3-member etcd cluster across them, a pomed per host started as its systemd unit starts it
# (fleet-lib.sh says which unit settings are emulated and how) and HAProxy in front with the
# shipped packaging/haproxy/pome.cfg, all on namespace addresses only. Every client call goes
# through the front unless a step says it asks one node. It shows, each step with what it
# measured:
#   1. 40 parallel creates at a team quota of 5: exactly 5 open fleet-wide (etcd, /v1/usage
#      and the nodes agree), 35 answered 402;
#   2. agents reach their twins through the front: by the sandbox in the path, by the
#      credential on vendor hosts and keyed paths (GitHub, Slack, Stripe, Linear), and with
#      the official SDKs (@octokit/rest by URL, stripe-node by key);
#   3. `pome run` of examples/triage passes through the front and collects its run there;
#   4. kill -9 of a pomed: its slots go within the lease TTL, its sandboxes are failed once
#      it is back, nothing is counted twice; Restart=on-failure gives the slots back at once;
#   5. an etcd member killed during 40 parallel creates: still exactly the quota admitted;
#   6. etcd's quorum lost: creates refused 503 ledger_unavailable with its reason through
#      the front, open sandboxes keep serving; back when the quorum is;
#   7. a node partitioned from etcd (its etcd link down): it refuses creates, its slots
#      expire and others take them, and when it returns nothing is over-admitted;
#   8. creates per second through the front (3 nodes) and to one node;
#   9. a node stopped (SIGTERM, as `systemctl stop`) under load: every call in flight is
#      answered, no reset, new creates land on the other nodes.
# ~70 s on 2 cores (ctest: label system, TIMEOUT 900, RUN_SERIAL, from tests/CMakeLists.txt's
# glob). Skips (77) unless root with ip netns, nsenter, etcd, etcdctl, haproxy, jq, curl and
# python3. KEEP_TMP=1 keeps the logs (every pomed's, etcd's, HAProxy's).
source "$(dirname "$0")/fleet-lib.sh"

# ---- setup
t_setup=$(ms)
net_up
for i in 1 2 3; do etcd_start "$i"; done
etcd_wait_healthy
API_KEY=pome_$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
KEY_SHA=$(printf %s "$API_KEY" | sha256sum | cut -d' ' -f1)
# team_put QUOTA: the team as etcd keeps it (watched by every node: no reload)
team_put() {
        ectl put "$PREFIX/teams/$TEAM" \
                "{\"sessions_quota\":$1,\"api_keys_sha256\":[\"$KEY_SHA\"],\"plan_tier\":\"ci\"}" >/dev/null
}
team_put 5
for i in 1 2 3; do node_conf "$i"; done
haproxy_start
for i in 1 2 3; do unit_start "$i"; done
wait_pool "n1 n2 n3"
for i in 1 2 3; do
        h=$(fr curl -s "http://${HOST_IP[i]}:7070/healthz")
        [[ $(jq -r '.ledger.ledger' <<<"$h") == etcd && $(jq -r '.ledger.reachable' <<<"$h") == true ]] ||
                fail "n$i's /healthz does not show a reachable etcd ledger: $h"
done
members=$(ectl get --prefix --keys-only "$PREFIX/nodes/" | grep -c . || true)
assert_eq "$members" 3 "membership keys in etcd"
# the node list HAProxy was given is the one etcd's membership gives
fr "$SRC/packaging/haproxy/pome-haproxy-nodes" "$SRC/packaging/haproxy/pome.cfg" --etcd "$ENDPOINTS" \
        --prefix "$PREFIX" >"$TMP/pome-from-etcd.cfg" || fail "pome-haproxy-nodes --etcd failed"
cmp -s "$TMP/pome.cfg" "$TMP/pome-from-etcd.cfg" ||
        fail "pome-haproxy-nodes --etcd differs: $(diff "$TMP/pome.cfg" "$TMP/pome-from-etcd.cfg" | head -5)"
pass "setup in $(secs_since "$t_setup") s: 3 hosts, etcd e1-e3 healthy, 3 pomeds READY=1 with 3 membership keys (pome-haproxy-nodes --etcd writes the same config), HAProxy's pool: $(pool_up)"

CREATE='{"twins":["github","slack","stripe"]}'

# burst N OUT: N creates at once through the front; OUT/<k>.json the answers, OUT/codes
# their statuses. Sets BURST_SECONDS.
burst() {
        local n=$1 out=$2 t0
        mkdir -p "$out"
        t0=$(ms)
        fr bash -c 'seq "$1" | xargs -P "$1" -I{} curl -s -o "$2/{}.json" -w "%{http_code}\n" \
                -H "Authorization: Bearer $3" -H "Content-Type: application/json" --data-binary "$4" "$5/v1/sandboxes"' \
                _ "$n" "$out" "$API_KEY" "$CREATE" "$CONTROL" >"$out/codes"
        BURST_SECONDS=$(secs_since "$t0")
}
# count CODE FILE
count() { grep -cx "$1" "$2" || true; }
# sids_of DIR: the session ids the creates in DIR opened
sids_of() { cat "$1"/*.json | jq -r 'select(.session_id != null and .state == "ready") | .session_id'; }
# nodes_of SID…: "n1 n1 n3…"
nodes_of() {
        local s
        for s in "$@"; do echo "n$(node_of "$s")"; done | sort | xargs
}

# ---- 1. 40 parallel creates at quota 5
burst 40 "$TMP/burst1"
c201=$(count 201 "$TMP/burst1/codes") c402=$(count 402 "$TMP/burst1/codes")
[[ $c201 == 5 && $c402 == 35 ]] ||
        fail "40 creates at quota 5: $c201 × 201, $c402 × 402, others: $(grep -vx '201\|402' "$TMP/burst1/codes" | sort | uniq -c | xargs); $(grep -h -v session_id "$TMP"/burst1/*.json | grep -v quota_exceeded | head -2)"
refusal=$(grep -l quota_exceeded "$TMP"/burst1/*.json | head -1)
[[ -n $refusal ]] || fail "a 402 is not quota_exceeded: $(grep -L session_id "$TMP"/burst1/*.json | head -1 | xargs cat)"
mapfile -t SIDS < <(sids_of "$TMP/burst1")
consistent "after the burst"
assert_eq "$SLOTS" 5 "slots after 40 creates at quota 5"
pass "40 parallel creates through the front in $BURST_SECONDS s: 5 × 201 (on $(nodes_of "${SIDS[@]}")), 35 × 402 quota_exceeded; $CONSISTENT_DETAIL"

# A list is its node's; its next page (starting_after=<sid>) must reach that node, whichever
# node the front sends the first page to (round robin: asked six times).
paged=0
for _ in 1 2 3 4 5 6; do
        capi GET "/v1/sandboxes?state=running&limit=1"
        assert_eq "$STATUS" 200 "GET /v1/sandboxes?limit=1 through the front"
        first=$(jq -r '.data[0].session_id // empty' <<<"$BODY") lister=$(jq -r .node <<<"$BODY")
        [[ -n $first ]] || continue # a node the burst left empty
        [[ $first == ses_"$lister"_* ]] || fail "a list's first page from node $lister holds '$first'"
        paged=$((paged + 1))
        capi GET "/v1/sandboxes?state=running&limit=1&starting_after=$first"
        assert_eq "$STATUS" 200 "the page after $first through the front ($(head -c 300 <<<"$BODY"))"
        assert_eq "$(jq -r .node <<<"$BODY")" "$lister" "the node that answered the page after $first"
done
((paged >= 2)) || fail "only $paged of 6 first pages held a sandbox"
pass "a list's pages through the front: each first page says its node, the next page (starting_after) reached that node $paged times of $paged"

# ---- 2. agents reach their twins through the front
# created SID: the create answer of SID (from burst1 or a later create)
created() { cat "$TMP"/burst*/*.json "$TMP"/created/*.json 2>/dev/null | jq -c --arg s "$1" 'select(.session_id == $s)' || true; }
mkdir -p "$TMP/created"
calls=0
# expect STATUS WHAT: one call's status
expect() {
        [[ $STATUS == "$1" ]] || fail "$2: HTTP $STATUS, not $1: ${BODY:0:300}"
        calls=$((calls + 1))
}
for sid in "${SIDS[@]}"; do
        c=$(created "$sid")
        jwt=$(jq -r .session_token <<<"$c")
        gh_rest=$(jq -r .per_twin.github.rest_url <<<"$c")
        ghp=$(jq -r .provider_credentials.github.token <<<"$c")
        xoxb=$(jq -r .provider_credentials.slack.token <<<"$c")
        sk=$(jq -r .provider_credentials.stripe.api_key <<<"$c")
        # by the sandbox in the path
        twin_call GET "$gh_rest/repos/acme/api/issues/1" "Authorization: Bearer $jwt"
        expect 200 "$sid: GitHub by its rest_url"
        [[ $(jq -r .number <<<"$BODY") == 1 ]] || fail "$sid: issue #1 by path: $BODY"
        # by the credential: GitHub's own host name and provider token
        twin_call GET "$GATEWAY/repos/acme/api/issues/1" "Authorization: token $ghp" -H "Host: api.github.com"
        expect 200 "$sid: GitHub as api.github.com with its ghp_pome_ token"
        # Slack's host, the token as a form parameter (no Authorization at all)
        twin_call POST "$GATEWAY/api/auth.test" "" -H "Host: slack.com" --data-urlencode "token=$xoxb"
        expect 200 "$sid: Slack as slack.com with token= in the form"
        [[ $(jq -r .ok <<<"$BODY") == true ]] || fail "$sid: auth.test by token=: $BODY"
        # Stripe's keyed path, the key as Basic auth's user (curl -u, as Stripe documents it)
        twin_call GET "$GATEWAY/v1/customers" "" -u "$sk:"
        expect 200 "$sid: Stripe /v1 with Basic sk_test_pome_…"
        # the session JWT on a keyed path
        twin_call GET "$GATEWAY/v1/balance" "Authorization: Bearer $jwt"
        expect 200 "$sid: Stripe /v1 with the session JWT as bearer"
done
# Linear and Gmail: their keys on their root paths (Linear's bare, without Bearer)
discard "${SIDS[0]}"
capi POST /v1/sandboxes '{"twins":["linear","gmail"]}'
[[ $STATUS == 201 ]] || fail "create linear+gmail: $STATUS $BODY"
echo "$BODY" >"$TMP/created/lg.json"
LG_SID=$(jq -r .session_id <<<"$BODY")
lin=$(jq -r .provider_credentials.linear.token <<<"$BODY")
ya29=$(jq -r .provider_credentials.gmail.token <<<"$BODY")
twin_call POST "$GATEWAY/graphql" "Authorization: $lin" -H 'Content-Type: application/json' \
        --data-binary '{"query":"{ viewer { id name } }"}'
expect 200 "$LG_SID: Linear /graphql with its bare lin_api_pome_ key"
[[ $(jq -r .data.viewer.id <<<"$BODY") != null ]] || fail "Linear viewer: $BODY"
twin_call GET "$GATEWAY/gmail/v1/users/me/profile" "Authorization: Bearer $ya29"
expect 200 "$LG_SID: Gmail /gmail/v1 with its ya29.pome- token"
# the official SDKs, unmodified: @octokit/rest by the rest_url, stripe-node by its key alone
SDK_OUT=$(cd "$SRC/tests/conformance" && [[ -d node_modules/@octokit/rest && -d node_modules/stripe ]] &&
        fr env C="$(created "${SIDS[1]}")" node --input-type=module -e '
import { Octokit } from "@octokit/rest";
import Stripe from "stripe";
const c = JSON.parse(process.env.C);
const octokit = new Octokit({ auth: c.session_token, baseUrl: c.per_twin.github.rest_url });
const issue = await octokit.rest.issues.get({ owner: "acme", repo: "api", issue_number: 1 });
const base = new URL(c.provider_credentials.stripe.api_base);
const stripe = new Stripe(c.provider_credentials.stripe.api_key,
        { host: base.hostname, port: Number(base.port), protocol: "http" });
const cus = await stripe.customers.create({ email: "fleet@acme.test" });
const again = await stripe.customers.retrieve(cus.id);
console.log(`octokit issues.get #${issue.data.number}, stripe-node customers.create ${cus.id} and retrieve ${again.id}`);
' 2>&1) || SDK_OUT="skipped (${SDK_OUT:-no node_modules in tests/conformance: .ci/run installs them})"
[[ $SDK_OUT != *Error* ]] || fail "the official SDKs through the front: $SDK_OUT"
pass "twins through the front: $calls calls all 200 on sandboxes of $(nodes_of "${SIDS[@]}" "$LG_SID") — by path, by token on api.github.com, by token= on slack.com, Basic and JWT on Stripe's /v1, Linear's bare key on /graphql, ya29. on /gmail/v1; SDKs: $SDK_OUT"

# ---- 3. pome run of an example, through the front
discard_all
consistent "before pome run"
assert_eq "$SLOTS" 0 "slots before pome run"
seal=--no-seal
doctor=$(fr env -i PATH="$PATH" HOME="$TMP" "$POME" doctor 2>/dev/null || true)
grep -qE '^ok +agent seal' <<<"$doctor" && seal=
t0=$(ms)
fr env -i PATH="$PATH" HOME="$TMP" LANG=C.UTF-8 POME_API_URL="$CONTROL" POME_API_KEY="$API_KEY" \
        "$POME" run "$SRC/examples/triage/task.md" --code-only $seal --out "$TMP/runs" --json \
        -- "$SRC/examples/triage/good-agent.sh" >"$TMP/run.json" 2>"$TMP/run.err" ||
        fail "pome run through the front exited $?: $(tail -5 "$TMP/run.err")"
run_s=$(secs_since "$t0")
assert_eq "$(jq -r .result "$TMP/run.json")" pass "the triage run's result"
RUN_DIR=$(jq -r '.trials[0].run_dir' "$TMP/run.json")
RUN_SID=$(jq -r '.trials[0].session_id' "$TMP/run.json")
for f in task.md github.seed.json slack.seed.json github.tape.jsonl slack.tape.jsonl github.final.json \
        slack.final.json verdict.json summary.md meta.json; do
        [[ -s $RUN_DIR/$f ]] || fail "the run directory lacks $f"
done
capi GET "/v1/sandboxes/$RUN_SID/verdict"
[[ $STATUS == 200 ]] || fail "the verdict through the front: $STATUS $BODY"
assert_eq "$(jq -cS . <<<"$BODY")" "$(jq -cS . "$RUN_DIR/verdict.json")" "the verdict through the front and the collected one"
cmp -s "$RUN_DIR/verdict.json" "$TMP/n$(node_of "$RUN_SID")/state/runs/$RUN_SID/verdict.json" ||
        fail "the collected verdict.json is not node n$(node_of "$RUN_SID")'s bytes"
capi GET "/v1/sandboxes/$RUN_SID"
assert_eq "$(jq -r .state <<<"$BODY")" "done" "the run's sandbox"
pass "pome run examples/triage ${seal:-sealed} through the front in $run_s s: pass, graded by $(jq -r '.trials[0].graded_by' "$TMP/run.json") on n$(node_of "$RUN_SID"), its run directory collected through the front (verdict.json = node's bytes), $(wc -l <"$RUN_DIR/github.tape.jsonl") GitHub and $(wc -l <"$RUN_DIR/slack.tape.jsonl") Slack tape rows"

# create_on I [TWINS-JSON]: a sandbox created on node I directly; prints its id
create_on() {
        napi "$1" POST /v1/sandboxes "${2:-{\"twins\":[\"github\"]\}}"
        [[ $STATUS == 201 ]] || fail "create on n$1: $STATUS $BODY"
        echo "$BODY" >"$TMP/created/$(jq -r .session_id <<<"$BODY").json"
        jq -r .session_id <<<"$BODY"
}
# create_front: a sandbox created through the front; prints its id
create_front() {
        capi POST /v1/sandboxes '{"twins":["github"]}'
        [[ $STATUS == 201 ]] || fail "create through the front: $STATUS $BODY"
        echo "$BODY" >"$TMP/created/$(jq -r .session_id <<<"$BODY").json"
        jq -r .session_id <<<"$BODY"
}
# state_of SID: "state reason" through the front
state_of() {
        capi GET "/v1/sandboxes/$1"
        jq -r '"\(.state) \(.reason)"' <<<"$BODY"
}
# wait_state SID STATE [SECONDS]: until SID is STATE through the front (default 10 s)
wait_state() {
        for _ in $(seq 1 $((${3:-10} * 10))); do
                [[ $(state_of "$1") == "$2 "* ]] && return 0
                sleep 0.1
        done
        fail "$1 is '$(state_of "$1")', not $2"
}
# github_call SID: GET issue #1 on SID's GitHub twin through the front; sets STATUS, BODY
github_call() {
        local c
        c=$(created "$1")
        twin_call GET "$(jq -r .per_twin.github.rest_url <<<"$c")/repos/acme/api/issues/1" \
                "Authorization: Bearer $(jq -r .session_token <<<"$c")"
}

# ---- 4. kill -9 of a pomed
discard_all
create_on 1 >/dev/null
create_on 2 >/dev/null
s3=$(create_on 3) s4=$(create_on 3)
create_front >/dev/null
consistent "before kill -9"
assert_eq "$SLOTS" 5 "slots before kill -9"
# a: the host dies (no restart)
unit_down 3
t0=$(ms)
unit_kill9 3
gone=$(wait_slots 3 $((LEASE_TTL + 3)))
[[ -z $(ectl get --prefix --keys-only "$PREFIX/nodes/n3") ]] || fail "n3's membership outlived its slots"
(($(ms) - t0 <= (LEASE_TTL + 2) * 1000)) || fail "n3's slots took $(secs_since "$t0") s to go (lease TTL $LEASE_TTL s)"
wait_pool "n1 n2"
github_call "$s3"
[[ $STATUS == 503 && $(jq -r .error.type <<<"$BODY") == node_unavailable ]] ||
        fail "a call to a sandbox of the dead n3: $STATUS $BODY"
t1=$(create_front) t2=$(create_front)
consistent "after n3 died"
assert_eq "$SLOTS" 5 "slots once others took n3's"
pass "kill -9 of n3 (no restart): its 2 slots and membership gone from etcd ${gone} s later (lease TTL ${LEASE_TTL} s), the front's pool $(pool_up), its sandbox's call HAProxy's 503 node_unavailable, 2 new creates on $(nodes_of "$t1" "$t2"); $CONSISTENT_DETAIL"
# b: the host comes back
unit_start 3
wait_pool "n1 n2 n3"
wait_state "$s3" failed
wait_state "$s4" failed
consistent "after n3 came back"
assert_eq "$SLOTS" 5 "slots after n3 came back"
pass "n3 back (READY=1): its sandboxes read through the front as '$(state_of "$s3")', '$(state_of "$s4")'; nothing counted twice: $CONSISTENT_DETAIL"
# c: Restart=on-failure
discard "$t1"
s6=$(create_on 3)
consistent "before the second kill -9"
r=$(ready_count 3)
t0=$(ms)
unit_kill9 3
wait_slots 4 $((LEASE_TTL + 3)) >/dev/null
gone=$(secs_since "$t0")
wait_ready 3 $((r + 1))
up=$(awk '$2 == "started" { t = $1 } END { print t }' "$TMP/n3/unit.events")
wait_state "$s6" failed
consistent "after the restart"
assert_eq "$SLOTS" 4 "slots after the restart"
pass "kill -9 of n3 under Restart=on-failure: restarted $(awk -v a="$up" -v b="$t0" 'BEGIN { printf "%.2f", a - b / 1000 }') s later, READY=1 again, its slot gone ${gone} s after the kill (the old lease revoked at the restart, not waited out), its sandbox '$(state_of "$s6")'; $CONSISTENT_DETAIL"

# ---- 5. one etcd member killed during 40 parallel creates
discard_all
consistent "before the second burst"
assert_eq "$SLOTS" 0 "slots before the second burst"
# etcd_id I: member e<I>'s id (hex, as etcdctl prints it: JSON's uint64 would lose digits in jq)
etcd_id() { ectl member list | awk -F', ' -v n="e$1" '$3 == n { print $1 }'; }
# etcd_leader: the leader's number
etcd_leader() {
        local i
        for i in 1 2 3; do
                fr env ETCDCTL_API=3 etcdctl --endpoints="http://${ETCD_IP[i]}:2379" endpoint status 2>/dev/null |
                        awk -F', ' -v i="$i" '$5 == "true" { print i }'
        done
}
# the nodes joined through e1 (the first endpoint): kill it, as a follower (a leader's death
# is an election, and etcd's quorum lost is step 6)
if [[ $(etcd_leader) == 1 ]]; then
        ectl move-leader "$(etcd_id 2)" >/dev/null
fi
[[ $(etcd_leader) != 1 ]] || fail "e1 is still etcd's leader"
burst 40 "$TMP/burst2" &
bpid=$!
sleep 0.05
etcd_kill 1
wait "$bpid"
c201=$(count 201 "$TMP/burst2/codes") c402=$(count 402 "$TMP/burst2/codes")
others=$(grep -vx '201\|402' "$TMP/burst2/codes" | sort | uniq -c | xargs || true)
consistent "after the second burst"
[[ $c201 == 5 && $c402 == 35 && $SLOTS == 5 ]] ||
        fail "40 creates with e1 killed: $c201 × 201, $c402 × 402, others: ${others:-none}; $CONSISTENT_DETAIL"
etcd_start 1
etcd_wait_healthy
pass "e1 (a follower, the nodes' endpoint) killed 0.05 s into 40 parallel creates ($BURST_SECONDS s): 5 × 201 on $(nodes_of $(sids_of "$TMP/burst2")), 35 × 402; $CONSISTENT_DETAIL; e1 back and healthy"

# ---- 6. etcd's quorum lost
mapfile -t Q_SIDS < <(sids_of "$TMP/burst2")
discard "${Q_SIDS[0]}"
consistent "before the quorum is lost"
etcd_kill 2
etcd_kill 3
t0=$(ms)
capi POST /v1/sandboxes '{"twins":["github"]}'
refused=$(secs_since "$t0")
[[ $STATUS == 503 && $(jq -r .error.type <<<"$BODY") == ledger_unavailable ]] ||
        fail "a create without etcd's quorum: $STATUS $BODY"
QUORUM_MSG=$(jq -r .error.message <<<"$BODY")
served=0
for sid in "${Q_SIDS[@]:1}"; do
        github_call "$sid"
        [[ $STATUS == 200 ]] || fail "$sid without etcd's quorum: $STATUS $BODY"
        served=$((served + 1))
done
h=$(fr curl -s "http://${HOST_IP[1]}:7070/healthz")
etcd_start 2
etcd_start 3
etcd_wait_healthy
t0=$(ms)
for _ in $(seq 1 100); do
        capi POST /v1/sandboxes '{"twins":["github"]}'
        [[ $STATUS == 201 ]] && break
        sleep 0.2
done
[[ $STATUS == 201 ]] || fail "no create admitted 20 s after etcd's quorum came back: $STATUS $BODY"
echo "$BODY" >"$TMP/created/q.json"
consistent "after the quorum came back"
assert_eq "$SLOTS" 5 "slots after the quorum came back"
pass "etcd's quorum lost (e2, e3 killed): a create through the front refused in $refused s with 503 ledger_unavailable: \"$QUORUM_MSG\"; $served open sandboxes kept serving (200); n1's /healthz ledger.reachable $(jq -r .ledger.reachable <<<"$h"); quorum back: a create admitted $(secs_since "$t0") s after etcd was healthy; $CONSISTENT_DETAIL"

# ---- 7. a node partitioned from etcd
discard_all
p1=$(create_on 3) p2=$(create_on 3)
consistent "before the partition"
assert_eq "$SLOTS" 2 "slots before the partition"
ip -n "${NS_H[3]}" link set etcd0 down
t0=$(ms)
napi 3 POST /v1/sandboxes '{"twins":["github"]}'
[[ $STATUS == 503 && $(jq -r .error.type <<<"$BODY") == ledger_unavailable ]] ||
        fail "a create on n3 cut from etcd: $STATUS $BODY"
PART_MSG=$(jq -r .error.message <<<"$BODY")
github_call "$p1"
[[ $STATUS == 200 ]] || fail "n3's sandbox while it is cut from etcd: $STATUS $BODY"
wait_slots 0 $((LEASE_TTL + 5)) >/dev/null
expired=$(secs_since "$t0")
f=()
for _ in 1 2 3 4 5; do f+=("$(create_front)"); done
consistent "while n3 is cut off" 1 2
assert_eq "$SLOTS" 5 "slots while n3 is cut off"
during="$CONSISTENT_DETAIL, n3 still serving its $(used_here 3) unledgered"
[[ $(nodes_of "${f[@]}") != *n3* ]] || fail "a create was admitted on n3 while it is cut from etcd: $(nodes_of "${f[@]}")"
ip -n "${NS_H[3]}" link set etcd0 up
t0=$(ms)
for _ in $(seq 1 150); do
        [[ $(fr curl -s "http://${HOST_IP[3]}:7070/healthz" | jq -r .ledger.reachable) == true ]] && break
        sleep 0.1
done
back=$(secs_since "$t0")
wait_state "$p1" failed 15
wait_state "$p2" failed 15
consistent "after n3 returned"
assert_eq "$SLOTS" 5 "slots after n3 returned (the quota)"
pass "n3 cut from etcd (its etcd0 link down): its create refused 503 \"$PART_MSG\", its sandboxes kept serving, their slots expired ${expired} s after the cut and 5 creates through the front landed on $(nodes_of "${f[@]}") ($during); link up: reachable again in $back s, its 2 sandboxes '$(state_of "$p1")', not over-admitted: $CONSISTENT_DETAIL"

# ---- 8. creates per second through the front
team_put 1000
for _ in $(seq 1 50); do
        capi GET /v1/usage
        [[ $(jq -r .sessions_quota <<<"$BODY") == 1000 ]] && break
        sleep 0.1
done
discard_all
# rate N PARALLEL URL OUT: N github-only creates, PARALLEL at a time, at URL; prints creates/s
rate() {
        local n=$1 p=$2 url=$3 out=$4 t0 s
        mkdir -p "$out"
        t0=$(ms)
        fr bash -c 'seq "$1" | xargs -P "$2" -I{} curl -s -o "$3/{}.json" -w "%{http_code}\n" \
                -H "Authorization: Bearer $4" -H "Content-Type: application/json" \
                --data-binary "{\"twins\":[\"github\"]}" "$5/v1/sandboxes"' \
                _ "$n" "$p" "$out" "$API_KEY" "$url" >"$out/codes"
        s=$(($(ms) - t0))
        [[ $(count 201 "$out/codes") == "$n" ]] ||
                fail "$n creates at $url: $(sort "$out/codes" | uniq -c | xargs)"
        awk -v n="$n" -v ms="$s" 'BEGIN { printf "%.1f", n * 1000 / ms }'
}
front_rate=$(rate 90 9 "$CONTROL" "$TMP/rate-front")
spread=$(nodes_of $(sids_of "$TMP/rate-front") | tr ' ' '\n' | uniq -c | awk '{ printf "%s%s×%s", (NR > 1 ? " " : ""), $2, $1 }')
consistent "after 90 creates"
assert_eq "$SLOTS" 90 "slots after 90 creates"
discard_all
one_rate=$(rate 90 9 "http://${HOST_IP[1]}:7070" "$TMP/rate-one")
discard_all
team_put 5
pass "creates/s (github-only sandboxes, 9 at a time, 90 each): $front_rate through the front to 3 nodes ($spread), $one_rate to n1 alone — every create one etcd admission"

# ---- 9. a node stopped (SIGTERM) with calls in flight
LOAD_PY='
import http.client, json, sys, threading, time, urllib.parse
out, duration, control, key, targets, nthreads = sys.argv[1:7]
targets = json.load(open(targets)); end = time.time() + float(duration)
recs, lock = [], threading.Lock()
def req(method, url, headers, body=None):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        c.request(method, u.path + ("?" + u.query if u.query else ""), body=body, headers=headers)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()
def caller(k):
    t = targets[k % len(targets)]
    while time.time() < end:
        t0 = time.time()
        try:
            st, body = req("GET", t["url"] + "/repos/acme/api/issues/1", {"Authorization": "Bearer " + t["token"]})
            res = str(st)
            for why in (b"shutting_down", b"shutting down", b"node_unavailable"):
                if st != 200 and why in body:
                    res += " " + why.decode().replace(" ", "_")
                    break
        except Exception as e:
            res = "ERR:" + type(e).__name__
        with lock:
            recs.append({"kind": "call", "node": t["node"], "t0": t0, "t1": time.time(), "res": res})
def creator():
    auth = {"Authorization": "Bearer " + key}
    while time.time() < end:
        t0, sid = time.time(), None
        try:
            st, data = req("POST", control + "/v1/sandboxes", dict(auth, **{"Content-Type": "application/json"}), b"{\"twins\":[\"github\"]}")
            res = str(st)
            sid = json.loads(data).get("session_id") if st == 201 else None
        except Exception as e:
            res = "ERR:" + type(e).__name__
        with lock:
            recs.append({"kind": "create", "t0": t0, "t1": time.time(), "res": res, "sid": sid})
        if sid:
            try:
                st, data = req("DELETE", control + "/v1/sandboxes/" + sid, auth)
                if st == 409:
                    tok = json.loads(data)["error"]["details"]["discard_token"]
                    req("DELETE", control + "/v1/sandboxes/%s?confirm_discard=%s" % (sid, tok), auth)
            except Exception:
                pass
        time.sleep(0.05)
ts = [threading.Thread(target=caller, args=(k,)) for k in range(int(nthreads))] + [threading.Thread(target=creator)]
for t in ts: t.start()
for t in ts: t.join()
json.dump(recs, open(out, "w"))
'
discard_all
d1=$(create_on 1) d2=$(create_on 2) d3=$(create_on 2) d4=$(create_on 3)
# half of the callers on n2's two sandboxes
for sid in "$d2" "$d1" "$d3" "$d4"; do
        c=$(created "$sid")
        jq -n --argjson c "$c" --arg n "n$(node_of "$sid")" \
                '{node: $n, url: $c.per_twin.github.rest_url, token: $c.session_token}'
done | jq -s . >"$TMP/targets.json"
fr python3 -c "$LOAD_PY" "$TMP/load.json" 6 "$CONTROL" "$API_KEY" "$TMP/targets.json" 12 &
lpid=$!
sleep 2
T_TERM=$(ms)
unit_stop 2
T_EXIT=$(awk '$2 == "exited" { t = $1 } END { printf "%.0f", t * 1000 }' "$TMP/n2/unit.events")
wait "$lpid"
grep -q ' STOPPING=1$' "$TMP/n2/notify.log" || fail "n2 did not say STOPPING=1"
assert_eq "$STOP_RC" 0 "n2's exit status after SIGTERM"
[[ -z $(ectl get --prefix --keys-only "$PREFIX/nodes/n2") ]] || fail "n2's membership outlived its stop"
consistent "after n2 stopped" 1 3
{ read -r errors; read -r others; read -r others_bad; read -r inflight; read -r inflight_bad; read -r after_hist
        read -r creates; read -r creates_bad; read -r on_n2; } < <(jq -r \
        --argjson term "$T_TERM" '
        def ms: . * 1000;
        [.[] | select(.kind == "call")] as $calls | [.[] | select(.kind == "create")] as $cr |
        [($calls + $cr)[] | select(.res | startswith("ERR"))] | length,
        ([$calls[] | select(.node != "n2")] | length),
        ([$calls[] | select(.node != "n2" and .res != "200")] | length),
        ([$calls[] | select(.node == "n2" and (.t0 | ms) <= $term and (.t1 | ms) >= $term)] | length),
        ([$calls[] | select(.node == "n2" and (.t0 | ms) <= $term and (.t1 | ms) >= $term and .res != "200")] | length),
        ([$calls[] | select(.node == "n2" and (.t0 | ms) > $term) |
                .res] | group_by(.) | map("\(length) × \(.[0])") | join(", ")),
        ([$cr[] | select((.t0 | ms) > $term)] | length),
        ([$cr[] | select((.t0 | ms) > $term and .res != "201" and .res != "402")] | length),
        ([$cr[] | select((.t0 | ms) > $term and .sid != null and (.sid | startswith("ses_n2_")))] | length)' \
        "$TMP/load.json")
[[ $errors == 0 ]] || fail "$errors calls or creates got no HTTP answer (reset or closed) during n2's stop"
[[ $others_bad == 0 ]] || fail "$others_bad of $others calls to n1's and n3's sandboxes were not 200"
((inflight > 0)) || fail "no call to n2 was in flight at its SIGTERM: the load did not reach it"
[[ $inflight_bad == 0 ]] || fail "$inflight_bad of $inflight calls in flight at n2's SIGTERM were not 200"
[[ $creates_bad == 0 && $on_n2 == 0 ]] ||
        fail "creates during n2's stop: $creates_bad not 201/402, $on_n2 landed on n2"
aborted=$(awk '$10 ~ /^S[DH]/' "$TMP/haproxy.log" | wc -l)
[[ $aborted == 0 ]] || fail "HAProxy saw $aborted responses cut by a server: $(awk '$10 ~ /^S[DH]/' "$TMP/haproxy.log" | head -2)"
pass "n2 stopped with SIGTERM under load (12 callers, half on n2's 2 sandboxes): STOPPING=1, exit 0 $((T_EXIT - T_TERM)) ms after the SIGTERM; $inflight calls in flight at the SIGTERM all 200; n2's calls sent after it: ${after_hist:-none} (410: its sandbox ended by the drain; 503 shutting_down: pomed's own while it drains; node_unavailable: HAProxy's once n2 no longer listens); $others calls to n1/n3 all 200; $creates creates during the stop all 201/402, none on n2; no reset, no response cut (HAProxy: 0 SD/SH); membership gone, $CONSISTENT_DETAIL"
