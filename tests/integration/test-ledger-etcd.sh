#!/usr/bin/env bash
# The etcd ledger (supervisor/ledger-etcd.c): a real etcd on loopback, a team written into it
# with etcdctl (quota 5), three real pomeds with fleet: configs (nodes n1 n2 n3, lease_ttl 3s).
#   (a) 40 parallel creates spread over the three: exactly 5 × 201 and 35 × 402, 5 slot keys
#       in etcd, sandbox ids ses_<node>_…, every node's /v1/usage says 5 (through its watch);
#   (b) a quota written to etcd reaches every node without SIGHUP;
#   (i) a second pomed with a node name in use (another host's, or a pomed running here): refused;
#   (c) kill -9 of a node: restarted at once (same name and state dir) it revokes the lease it
#       left, so its slots count no more at once; killed and left down, its slot keys go
#       within the TTL and the others admit into them; restarted, nothing counts twice;
#   (d) etcd stopped: a create is 503 ledger_unavailable saying etcd is out of reach, an open
#       sandbox keeps serving; etcd back: creates succeed again and the counts are right;
#   (g) a node's lease revoked behind its back: it takes a new one and admits its slots
#       again; a node stopped past its lease whose room others took: its sandboxes end
#       (slot_lost);
#   (e) SIGTERM of a node: its slot keys and its membership are gone at once (it leaves).
#   (f) a 3-member etcd cluster: one member down, the nodes move on to the others (a watch
#       resumed past a compaction reads everything again); two down, a create is 503 and
#       says etcd has no leader;
#   (h) etcd over TLS asking for client certificates: a node with fleet.etcd cert/key/ca
#       admits; one without its certificate is refused at start.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
        skip "etcd is not installed (Debian: apt install etcd-server etcd-client)"
fi

export ETCDCTL_API=3
PREFIX=/pome
TEAM=acme
KEY=pome_$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 32)
KEY_HASH=$(printf %s "$KEY" | sha256sum | cut -d' ' -f1)
TTL=3

# free_port: a loopback TCP port nothing listens on now, below the ephemeral range (where a
# connection's own port could take it before etcd binds it).
read -r EPHEMERAL_LOW _ </proc/sys/net/ipv4/ip_local_port_range
((EPHEMERAL_LOW > 12000)) || EPHEMERAL_LOW=32768
free_port() {
        local p
        for _ in $(seq 100); do
                p=$((10000 + RANDOM % (EPHEMERAL_LOW - 10000)))
                if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null &&
                        ! grep -qx "$p" "$TMP/ports" 2>/dev/null; then
                        echo "$p" >>"$TMP/ports"
                        echo "$p"
                        return
                fi
        done
        fail "no free loopback port"
}

# deadline SECONDS / before_deadline: a poll loop's bound (never a sleep as an assertion).
deadline() { DEADLINE=$((SECONDS + $1)); }
before_deadline() { ((SECONDS < DEADLINE)); }

declare -A ETCD_PID ETCD_CLIENT ETCD_PEER
# etcd_start NAME CLUSTER: one member (ports from ETCD_CLIENT/ETCD_PEER) in $TMP/etcd-NAME.
etcd_start() {
        local name=$1 cluster=$2 state=new
        [[ -d $TMP/etcd-$name ]] && state=existing
        etcd --name "$name" --data-dir "$TMP/etcd-$name" \
                --listen-client-urls "http://127.0.0.1:${ETCD_CLIENT[$name]}" \
                --advertise-client-urls "http://127.0.0.1:${ETCD_CLIENT[$name]}" \
                --listen-peer-urls "http://127.0.0.1:${ETCD_PEER[$name]}" \
                --initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PEER[$name]}" \
                --initial-cluster "$cluster" --initial-cluster-state "$state" \
                --initial-cluster-token "pome-test-$$" \
                >>"$TMP/etcd-$name.log" 2>&1 &
        ETCD_PID[$name]=$!
        EXTRA_PIDS+=("$!")
}
etcd_stop() {
        kill -TERM "${ETCD_PID[$1]}" 2>/dev/null || true
        wait "${ETCD_PID[$1]}" 2>/dev/null || true
}
# etcd_wait_healthy ENDPOINTS
etcd_wait_healthy() {
        deadline 20
        until etcdctl --endpoints "$1" --command-timeout=1s endpoint health >/dev/null 2>&1; do
                before_deadline || fail "etcd at $1 did not become healthy: $(tail -5 "$TMP"/etcd-*.log)"
                sleep 0.1
        done
}
ECTL_TLS=() # --cacert, --cert, --key for the TLS case
ectl() { etcdctl --endpoints "$ENDPOINTS" "${ECTL_TLS[@]}" --command-timeout=3s "$@"; }
# slot_keys [NODE]: the slot keys of team acme in etcd (of NODE's sandboxes only)
slot_keys() { ectl get --prefix "$PREFIX/slots/$TEAM/" --keys-only | grep "ses_${1:-}" || true; }
n_slot_keys() { slot_keys "${1:-}" | grep -c . || true; }

put_team() { # put_team QUOTA
        ectl put "$PREFIX/teams/$TEAM" \
                "{\"sessions_quota\": $1, \"api_keys_sha256\": [\"$KEY_HASH\"], \"plan_tier\": \"fleet\"}" >/dev/null
}

declare -A NODE_PID NODE_CTL
# node_start N: pomed node nN, state in $TMP/nN (kept across restarts).
node_start() {
        local n=$1 d=$TMP/n$1
        mkdir -p "$d/state"
        {
                echo "control_listen: 127.0.0.1:0"
                echo "gateway_listen: 127.0.0.1:0"
                echo "state_dir: $d/state"
                if [[ $n == 1 && -n ${BUS_SOCKET:-} ]]; then
                        echo "bus: unix:path=$BUS_SOCKET" # node n1 on a private system-like bus
                else
                        echo "bus: none"
                fi
                echo "fleet:"
                echo "  node: n$n"
                echo "  lease_ttl: ${TTL}s"
                echo "  timeout: 1s"
                [[ -z ${COMPACTION:-} ]] || echo "  compaction_interval: $COMPACTION"
                echo "  advertise_url: http://127.0.0.1:0/n$n"
                echo "  etcd:"
                echo "    endpoints: $ENDPOINTS"
                echo "    prefix: $PREFIX"
        } >"$d/pomed.conf"
        rm -f "$d/state/pomed.json"
        echo "--- start" >>"$d/pomed.log"
        "$POMED" --config "$d/pomed.conf" >>"$d/pomed.log" 2>&1 &
        NODE_PID[$n]=$!
        EXTRA_PIDS+=("$!")
        deadline 20
        until [[ -f $d/state/pomed.json ]]; do
                kill -0 "${NODE_PID[$n]}" 2>/dev/null || fail "node n$n exited during start-up: $(tail -5 "$d/pomed.log")"
                before_deadline || fail "node n$n did not start within 20 s"
                sleep 0.05
        done
        NODE_CTL[$n]=$(jq -r .control_url "$d/state/pomed.json")
}
# node_stop N SIGNAL: and waits; a SIGTERM must end it with 0 and no sanitizer report
node_stop() {
        local n=$1 sig=$2 status=0
        kill "-$sig" "${NODE_PID[$n]}"
        wait "${NODE_PID[$n]}" || status=$?
        if [[ $sig == TERM && $status -ne 0 ]]; then
                fail "node n$n exited with $status after SIGTERM: $(tail -20 "$TMP/n$n/pomed.log")"
        fi
        NODE_PID[$n]=
}
sanitizer_check() {
        local f
        for f in "$TMP"/n*/pomed.log; do
                if grep -qE "AddressSanitizer|LeakSanitizer|runtime error:" "$f"; then
                        grep -A30 -E "AddressSanitizer|LeakSanitizer|runtime error:" "$f" | head -60 >&2
                        fail "sanitizer report in $f"
                fi
        done
}
# on failure: every node's log tail (lib.sh's fail shows $TMP/pomed.log, which is none here)
on_exit() {
        local rc=$?
        if ((rc != 0 && rc != 77)); then
                for f in "$TMP"/n*/pomed.log; do
                        [[ -f $f ]] || continue
                        echo "--- $f (last 25 lines)" >&2
                        tail -25 "$f" >&2
                done
        fi
        cleanup "$rc"
}
trap on_exit EXIT

# capi N METHOD PATH [BODY]: a control API call to node nN with the team's key
capi() {
        local n=$1 method=$2 path=$3 data=${4:-}
        local args=(-s -o "$TMP/body" -w '%{http_code}' -X "$method" -H "Authorization: Bearer $KEY")
        [[ -n $data ]] && args+=(-H 'Content-Type: application/json' --data-binary "$data")
        STATUS=$(curl "${args[@]}" "${NODE_CTL[$n]}$path")
        BODY=$(cat "$TMP/body")
}
usage_of() { # usage_of N FIELD
        capi "$1" GET /v1/usage
        jq -r ".$2" <<<"$BODY"
}
# wait_usage FIELD VALUE N…: until every named node's /v1/usage says so (10 s)
wait_usage() {
        local field=$1 want=$2 n
        shift 2
        deadline 10
        for n in "$@"; do
                until [[ $(usage_of "$n" "$field") == "$want" ]]; do
                        before_deadline || fail "node n$n: /v1/usage $field stays $(usage_of "$n" "$field"), expected $want: $BODY"
                        sleep 0.1
                done
        done
}
create_on() { # create_on N: sets STATUS, BODY
        capi "$1" POST /v1/sandboxes '{"twins":["github"]}'
}
discard_on() { # discard_on N SID
        capi "$1" DELETE "/v1/sandboxes/$2"
        if [[ $STATUS == 409 ]]; then
                capi "$1" DELETE "/v1/sandboxes/$2?confirm_discard=$(jq -r .error.details.discard_token <<<"$BODY")"
        fi
        [[ $STATUS == 204 ]] || fail "discard $2 on n$1 answered $STATUS: $BODY"
}

# ---- one etcd member, three nodes ----
ETCD_CLIENT[e1]=$(free_port)
ETCD_PEER[e1]=$(free_port)
SINGLE="e1=http://127.0.0.1:${ETCD_PEER[e1]}"
ENDPOINTS=http://127.0.0.1:${ETCD_CLIENT[e1]}
etcd_start e1 "$SINGLE"
etcd_wait_healthy "$ENDPOINTS"
put_team 5
source "$POME_SOURCE_DIR/tests/integration/dbus-lib.sh"
BUS_SOCKET=$TMP/bus.sock
start_bus "$BUS_SOCKET"
for n in 1 2 3; do node_start $n; done
for n in 1 2 3; do
        [[ $(ectl get "$PREFIX/nodes/n$n" --print-value-only | jq -r .node) == "n$n" ]] ||
                fail "no membership key for n$n"
done
wait_usage sessions_quota 5 1 2 3
pass "three nodes joined; the team in etcd is known to each"

# (a) 40 parallel creates over the three nodes
mkdir "$TMP/par"
for i in $(seq 40); do
        n=$((i % 3 + 1))
        curl -s -o "$TMP/par/$i.json" -w '%{http_code}\n' -X POST -H "Authorization: Bearer $KEY" \
                -H 'Content-Type: application/json' -d '{"twins":["github"]}' \
                "${NODE_CTL[$n]}/v1/sandboxes" >"$TMP/par/$i.status" &
        echo "$n" >"$TMP/par/$i.node"
done
# shellcheck disable=SC2046 # one pid a word
wait $(jobs -p | grep -vxF -f <(printf '%s\n' "${EXTRA_PIDS[@]}"))
assert_eq "$(cat "$TMP"/par/*.status | grep -c '^201$')" 5 "creates admitted fleet-wide"
assert_eq "$(cat "$TMP"/par/*.status | grep -c '^402$')" 35 "creates refused with 402"
for i in $(seq 40); do
        BODY=$(cat "$TMP/par/$i.json")
        n=$(cat "$TMP/par/$i.node")
        if [[ $(cat "$TMP/par/$i.status") == 402 ]]; then
                assert_jq .error.type quota_exceeded
        else
                sid=$(jq -r .session_id <<<"$BODY")
                [[ $sid =~ ^ses_n${n}_[A-Za-z0-9]+$ ]] || fail "sandbox id $sid of node n$n"
                echo "$n $sid $(jq -r .session_token <<<"$BODY") $(jq -r .per_twin.github.rest_url <<<"$BODY")" >>"$TMP/open"
        fi
done
assert_eq "$(n_slot_keys)" 5 "slot keys in etcd"
while read -r _ sid _; do
        slot_keys | grep -qx "$PREFIX/slots/$TEAM/$sid" || fail "no slot key for $sid: $(slot_keys)"
done <"$TMP/open"
wait_usage sessions_used 5 1 2 3
here=0
for n in 1 2 3; do here=$((here + $(usage_of $n sessions_used_here))); done
assert_eq "$here" 5 "sessions_used_here summed over the nodes"
# /metrics: the fleet's count on every node, each node's own share beside it
here=0
for n in 1 2 3; do
        m=$(curl -s -H "Authorization: Bearer $KEY" "${NODE_CTL[$n]}/metrics")
        assert_eq "$(awk -v l="pome_slots_used{team=\"$TEAM\"}" '$1 == l { print $2 }' <<<"$m")" 5 \
                "n$n's pome_slots_used"
        own=$(awk -v l="pome_slots_used_here{team=\"$TEAM\",node=\"n$n\"}" '$1 == l { print $2 }' <<<"$m")
        assert_eq "$own" "$(usage_of "$n" sessions_used_here)" "n$n's pome_slots_used_here"
        here=$((here + own))
        grep -qx "pome_ledger_reachable{node=\"n$n\"} 1" <<<"$m" || fail "n$n's pome_ledger_reachable is not 1"
done
assert_eq "$here" 5 "pome_slots_used_here summed over the nodes"
# D-Bus: n1's Team1.SessionsUsed is the fleet's count, not n1's own
bus_used=$(busctl --address="unix:path=$BUS_SOCKET" --json=short get-property sh.pome.Supervisor1 \
        "/sh/pome/Supervisor1/team/$TEAM" sh.pome.Team1 SessionsUsed | jq -r .data)
assert_eq "$bus_used" 5 "n1's D-Bus SessionsUsed (n1 holds $(usage_of 1 sessions_used_here))"
pass "(a) 40 parallel creates over 3 nodes, quota 5: 5 × 201, 35 × 402, 5 slot keys; /v1/usage, /metrics and D-Bus (n1) say 5 everywhere, each node's own share beside it ($here in all)"

# (b) a quota written to etcd reaches every node, no SIGHUP
put_team 7
wait_usage sessions_quota 7 1 2 3
put_team 5
wait_usage sessions_quota 5 1 2 3
ectl put "$PREFIX/teams/broken" '{"sessions_quota": "many"}' >/dev/null
put_team 5
deadline 10
until grep -q "teams/broken" "$TMP/n1/pomed.log"; do
        before_deadline || fail "an invalid team in etcd was not logged"
        sleep 0.1
done
ectl del "$PREFIX/teams/broken" >/dev/null
wait_usage sessions_quota 5 1 2 3
pass "(b) quota 7 then 5 written to etcd: every node follows without SIGHUP; an invalid team is logged and skipped"

# (i) one node name, two pomeds: refused at start, whether the other is on another host (a
# membership with a live lease and another machine id) or a pomed running here
# start_refused NAME STATE_DIR: pomed as node NAME must exit non-zero at start; sets REFUSAL
start_refused() {
        local d=$2 rc=0
        mkdir -p "$d/state"
        sed -e "s|$TMP/n1/state|$d/state|" -e "s|node: n1|node: $1|" "$TMP/n1/pomed.conf" >"$d/pomed.conf"
        timeout 30 "$POMED" --config "$d/pomed.conf" >"$d/pomed.log" 2>&1 || rc=$?
        [[ $rc -ne 0 && $rc -ne 124 ]] || fail "a second pomed as node $1 started (exit $rc)"
        REFUSAL=$(grep -o "fleet: cannot join through etcd.*" "$d/pomed.log" | head -1)
        [[ $REFUSAL == *"two nodes share the name"* ]] || fail "a second pomed as node $1: $(tail -3 "$d/pomed.log")"
}
fake_lease=$(ectl lease grant 60 | awk '{print $2}')
ectl put --lease="$fake_lease" "$PREFIX/nodes/n9" \
        '{"node":"n9","lease":"'"$fake_lease"'","hostname":"elsewhere","machine_id":"0123456789abcdef0123456789abcdef","pid":1}' >/dev/null
start_refused n9 "$TMP/dup-host"
refusal_host=$REFUSAL
ectl lease revoke "$fake_lease" >/dev/null
start_refused n2 "$TMP/dup-here"
[[ $REFUSAL == *"another pomed on this host (pid ${NODE_PID[2]})"* ]] || fail "the refusal does not name n2's pid: $REFUSAL"
[[ -n $(ectl get "$PREFIX/nodes/n2" --keys-only) ]] || fail "n2's membership went with the refused twin"
wait_usage sessions_used 5 1 2 3
pass "(i) a node name taken: refused at start ($refusal_host; $REFUSAL)"

# (c) kill -9 and an immediate restart: the lease it left is revoked at the join
# the node holding the most slots (the one whose kill frees most)
holder() {
        local best=0 bn=1 n u
        for n in "$@"; do
                u=$(n_slot_keys "n${n}_")
                if ((u > best)); then best=$u bn=$n; fi
        done
        echo "$bn"
}
A=$(holder 1 2 3)
held_a=$(n_slot_keys "n${A}_")
((held_a > 0)) || fail "node n$A holds no slot"
node_stop "$A" KILL
node_start "$A"
assert_eq "$(n_slot_keys "n${A}_")" 0 "n$A's slot keys right after its restart (its old lease revoked)"
others=$(printf '%s\n' 1 2 3 | grep -vx "$A" | tr '\n' ' ')
wait_usage sessions_used $((5 - held_a)) 1 2 3
assert_eq "$(usage_of "$A" sessions_used_here)" 0 "restarted n$A holds nothing"
grep -q "previous run" "$TMP/n$A/pomed.log" || fail "n$A's restart did not say it revoked its previous lease"
pass "(c1) n$A killed (-9) with $held_a slots and restarted at once: they count no more, at once"

# refill through the other nodes, then kill one and leave it down
B=
for n in $others; do
        while [[ $(n_slot_keys) -lt 5 ]]; do
                create_on "$n"
                [[ $STATUS == 201 ]] || break
                echo "$n $(jq -r '[.session_id, .session_token, .per_twin.github.rest_url] | join(" ")' <<<"$BODY")" >>"$TMP/open"
        done
done
assert_eq "$(n_slot_keys)" 5 "slot keys after refilling"
# shellcheck disable=SC2086 # node numbers, a word each
B=$(holder $others)
held_b=$(n_slot_keys "n${B}_")
rest=$(printf '%s\n' 1 2 3 | grep -vx "$B" | tr '\n' ' ')
t0=$SECONDS
node_stop "$B" KILL
deadline $((TTL + 4))
until [[ $(n_slot_keys "n${B}_") == 0 ]]; do
        before_deadline || fail "n$B's slot keys still there $((SECONDS - t0)) s after kill -9 (TTL $TTL s)"
        sleep 0.1
done
[[ -z $(ectl get "$PREFIX/nodes/n$B" --keys-only) ]] || fail "n$B's membership outlived its lease"
gone_after=$((SECONDS - t0))
# shellcheck disable=SC2086
wait_usage sessions_used $((5 - held_b)) $rest
admitted=0
for i in $(seq $((held_b + 2))); do
        n=$(cut -d' ' -f$((i % 2 + 1)) <<<"$rest")
        create_on "$n"
        if [[ $STATUS == 201 ]]; then
                admitted=$((admitted + 1))
                echo "$n $(jq -r '[.session_id, .session_token, .per_twin.github.rest_url] | join(" ")' <<<"$BODY")" >>"$TMP/open"
        else
                assert_status 402 "a create beyond the freed slots"
        fi
done
assert_eq "$admitted" "$held_b" "creates admitted into the killed node's slots"
assert_eq "$(n_slot_keys)" 5 "slot keys after the others took the freed slots"
node_start "$B"
# shellcheck disable=SC2086
wait_usage sessions_used 5 1 2 3
assert_eq "$(n_slot_keys)" 5 "slot keys after n$B's restart"
pass "(c2) n$B killed (-9) with $held_b slots: its keys gone within ${gone_after} s (TTL $TTL s), the others admitted $held_b; restarted, still 5"

# keep only what is open now (the killed nodes' sandboxes ended with their restart)
while read -r n sid token url; do
        capi "$n" GET "/v1/sandboxes/$sid"
        state=$(jq -r .state <<<"$BODY")
        [[ $state == ready || $state == running ]] && echo "$n $sid $token $url"
done <"$TMP/open" >"$TMP/open2"
mv "$TMP/open2" "$TMP/open"
assert_eq "$(grep -c . "$TMP/open")" 5 "sandboxes open on the nodes"

# (d) etcd out of reach
read -r _ sid token url < <(head -1 "$TMP/open")
twin_call GET "$url/repos/acme/api/issues/1" "$token"
ok_status=$STATUS
etcd_stop e1
create_on 1
assert_status 503 "a create while etcd is down"
assert_jq .error.type ledger_unavailable
msg=$(jq -r .error.message <<<"$BODY")
[[ $msg == *"etcd at $ENDPOINTS is out of reach"* ]] || fail "the 503 does not say etcd is out of reach: $msg"
create_on 2
assert_status 503 "a create on another node while etcd is down"
twin_call GET "$url/repos/acme/api/issues/1" "$token"
assert_eq "$STATUS" "$ok_status" "a twin call of open sandbox $sid while etcd is down"
[[ $STATUS == 200 ]] || fail "twin call answered $STATUS: $BODY"
# a sandbox ended while etcd is down gives its slot back once etcd is back
read -r dn dsid _ < <(tail -1 "$TMP/open")
discard_on "$dn" "$dsid"
deadline 10
until [[ $(curl -s "${NODE_CTL[3]}/healthz" | jq -r .ledger.reachable) == false ]]; do
        before_deadline || fail "/healthz does not say the ledger is unreachable"
        sleep 0.1
done
create_on 3
assert_status 503 "a create once the node knows etcd is out of reach"
msg2=$(jq -r .error.details.error <<<"$BODY")
[[ $msg2 == "etcd at $ENDPOINTS is out of reach since "*" s: connection refused" ]] ||
        fail "the 503 of a node that knows etcd is out of reach says: $msg2"
pass "(d1) etcd down: creates are 503 ledger_unavailable ($msg2); an open sandbox serves (200)"
etcd_start e1 "$SINGLE"
etcd_wait_healthy "$ENDPOINTS"
deadline 20
until [[ $(n_slot_keys) == 4 ]]; do
        before_deadline || fail "the slot of $dsid (ended while etcd was down) is still in etcd: $(slot_keys)"
        sleep 0.1
done
deadline 20
while :; do
        create_on 1
        [[ $STATUS == 201 ]] && break
        [[ $STATUS == 503 ]] || fail "a create after etcd's return answered $STATUS: $BODY"
        before_deadline || fail "creates are still refused 20 s after etcd is back: $BODY"
        sleep 0.2
done
# n2 refuses at once while it still counts etcd out of reach: its thread finds etcd again
# within a second (ledger-etcd.c), and only then does n2 ask etcd
deadline 10
until [[ $(curl -s "${NODE_CTL[2]}/healthz" | jq -r .ledger.reachable) == true ]]; do
        before_deadline || fail "n2's /healthz does not say the ledger is reachable again"
        sleep 0.1
done
create_on 2
assert_status 402 "the create after the free slot was taken"
assert_eq "$(n_slot_keys)" 5 "slot keys after etcd's return"
wait_usage sessions_used 5 1 2 3
pass "(d2) etcd back: creates admitted again, 5 slots, usage 5 everywhere"

# etcd frozen (SIGSTOP: connections open, nothing answers) past every lease: a create waits at
# most fleet.timeout (1 s) once, then refusals are at once; thawed, etcd expires the leases it
# could not renew, every node takes a new one and admits its slots again: nothing is lost
kill -STOP "${ETCD_PID[e1]}"
t_first=$(curl -s -o "$TMP/body" -w '%{time_total}' -X POST -H "Authorization: Bearer $KEY" \
        -H 'Content-Type: application/json' -d '{"twins":["github"]}' "${NODE_CTL[1]}/v1/sandboxes")
BODY=$(cat "$TMP/body")
assert_jq .error.type ledger_unavailable "a create while etcd is frozen"
t_next=$(curl -s -o "$TMP/body" -w '%{time_total}' -X POST -H "Authorization: Bearer $KEY" \
        -H 'Content-Type: application/json' -d '{"twins":["github"]}' "${NODE_CTL[1]}/v1/sandboxes")
BODY=$(cat "$TMP/body")
assert_jq .error.type ledger_unavailable "the next create while etcd is frozen"
awk -v a="$t_first" -v b="$t_next" 'BEGIN { exit !(a < 1.9 && b < 0.5) }' ||
        { kill -CONT "${ETCD_PID[e1]}"; fail "creates while etcd is frozen took $t_first s, then $t_next s (fleet.timeout 1 s)"; }
t_health=$(curl -s -o /dev/null -w '%{time_total}' "${NODE_CTL[2]}/healthz")
sleep $((TTL + 2)) # etcd frozen past every lease's TTL: the condition, not an assertion
kill -CONT "${ETCD_PID[e1]}"
# ledgers_fine N…: every named node reaches etcd on a live lease
ledgers_fine() {
        local n
        for n in "$@"; do
                [[ $(curl -s "${NODE_CTL[$n]}/healthz" | jq -r '.ledger.reachable and (.ledger.error == null)') == true ]] || return 1
        done
}
deadline 20
until [[ $(n_slot_keys) == 5 ]] && ledgers_fine 1 2 3; do
        before_deadline || fail "after etcd thawed: $(n_slot_keys) slot keys, $(curl -s "${NODE_CTL[1]}/healthz" | jq -c .ledger)"
        sleep 0.2
done
wait_usage sessions_used 5 1 2 3
! grep -q "slot_lost" "$TMP"/n*/pomed.log || fail "a slot was lost though every node had room to admit its own again"
pass "(d3) etcd frozen past the TTL: creates refused after ${t_first} s, then ${t_next} s (/healthz ${t_health} s); thawed: 5 slots, usage 5"

# (g) a lease lost: (1) revoked behind a node's back while the team has room: the node takes
# a new one and admits its slots again; (2) expired while the node was stopped (SIGSTOP) and
# the others took the room meanwhile: its sandboxes end (slot_lost)
G=$(holder 1 2 3)
held_g=$(n_slot_keys "n${G}_")
lease_g=$(ectl get "$PREFIX/nodes/n$G" --print-value-only | jq -r .lease)
ectl lease revoke "$lease_g" >/dev/null
deadline 10
until [[ $(n_slot_keys "n${G}_") == "$held_g" &&
        -n $(ectl get "$PREFIX/nodes/n$G" --keys-only) ]]; do
        before_deadline || fail "n$G did not admit its $held_g slots again after its lease was revoked: $(slot_keys)"
        sleep 0.1
done
lease_g2=$(ectl get "$PREFIX/nodes/n$G" --print-value-only | jq -r .lease)
[[ $lease_g2 != "$lease_g" ]] || fail "n$G's membership still names the revoked lease"
grep -q "new lease $lease_g2" "$TMP/n$G/pomed.log" || fail "n$G did not log its new lease"
wait_usage sessions_used 5 1 2 3
pass "(g1) n$G's lease revoked behind its back: new lease $lease_g2, its $held_g slots admitted again"

G=$(holder 1 2 3)
held_g=$(n_slot_keys "n${G}_")
rest=$(printf '%s\n' 1 2 3 | grep -vx "$G" | tr '\n' ' ')
lost_sids=$(slot_keys "n${G}_" | sed 's|.*/||')
kill -STOP "${NODE_PID[$G]}"
deadline $((TTL + 4))
until [[ $(n_slot_keys "n${G}_") == 0 ]]; do
        before_deadline || { kill -CONT "${NODE_PID[$G]}"; fail "n$G's slot keys outlived its lease while it was stopped"; }
        sleep 0.1
done
for i in $(seq "$held_g"); do
        create_on "$(cut -d' ' -f1 <<<"$rest")"
        [[ $STATUS == 201 ]] || { kill -CONT "${NODE_PID[$G]}"; fail "a create into stopped n$G's freed slots answered $STATUS: $BODY"; }
        echo "$(cut -d' ' -f1 <<<"$rest") $(jq -r '[.session_id, .session_token, .per_twin.github.rest_url] | join(" ")' <<<"$BODY")" >>"$TMP/open"
done
kill -CONT "${NODE_PID[$G]}"
for sid in $lost_sids; do
        deadline 10
        until capi "$G" GET "/v1/sandboxes/$sid" && [[ $(jq -r .state <<<"$BODY") == failed ]]; do
                before_deadline || fail "n$G's sandbox $sid stays $(jq -r .state <<<"$BODY") once its slot is lost"
                sleep 0.1
        done
        grep -q "$sid: its slot was lost" "$TMP/n$G/pomed.log" || fail "n$G did not log why $sid ended"
done
assert_eq "$(n_slot_keys)" 5 "slot keys once n$G's were lost"
wait_usage sessions_used 5 1 2 3
assert_eq "$(usage_of "$G" sessions_used_here)" 0 "n$G's slots once lost"
pass "(g2) n$G stopped past its lease, its $held_g slots taken meanwhile: on its return they are lost, its sandboxes end (slot_lost)"

# (e) SIGTERM: the node leaves at once
C=$(holder 1 2 3)
held_c=$(n_slot_keys "n${C}_")
rest=$(printf '%s\n' 1 2 3 | grep -vx "$C" | tr '\n' ' ')
node_stop "$C" TERM
assert_eq "$(n_slot_keys "n${C}_")" 0 "n$C's slot keys right after its SIGTERM"
[[ -z $(ectl get "$PREFIX/nodes/n$C" --keys-only) ]] || fail "n$C's membership is still there after its SIGTERM"
# shellcheck disable=SC2086
wait_usage sessions_used $((5 - held_c)) $rest
grep -q "fleet: left" "$TMP/n$C/pomed.log" || fail "n$C did not say it left the fleet"
pass "(e) n$C stopped (SIGTERM) with $held_c slots: its slot keys and membership gone at once"

# (j) etcd's history is compacted by the nodes (etcd 3.4 keeps every revision otherwise, and
# stops taking writes at its quota): n4 with fleet.compaction_interval 1s compacts to the
# revision its watch had reached an interval before
COMPACTION=1s node_start 4
put_team 5
rev=$(ectl get "$PREFIX/teams/$TEAM" -w json | jq -r .header.revision)
deadline 15
while :; do
        old=$(ectl get --rev=$((rev - 1)) "$PREFIX/teams/$TEAM" 2>&1 || true)
        [[ $old == *"required revision has been compacted"* ]] && break
        before_deadline || fail "revision $((rev - 1)) not compacted within 15 s: $(head -2 <<<"$old")"
        sleep 0.2
done
compactions=$(curl -s -H "Authorization: Bearer $KEY" "${NODE_CTL[4]}/metrics" |
        awk '$1 == "pome_ledger_compactions_total{node=\"n4\"}" { print $2 }')
((compactions >= 1)) || fail "n4's pome_ledger_compactions_total: '$compactions'"
ectl get "$PREFIX/teams/$TEAM" --print-value-only | jq -e .sessions_quota >/dev/null || fail "the team is gone after the compaction"
node_stop 4 TERM
pass "(j) n4 (compaction_interval 1s) compacted etcd's history past revision $((rev - 1)) ($compactions compactions); the current keys are whole"

for n in $rest; do node_stop "$n" TERM; done
sanitizer_check
assert_eq "$(n_slot_keys)" 0 "slot keys once every node left"
etcd_stop e1

# (f) a 3-member cluster on loopback
for m in c1 c2 c3; do
        ETCD_CLIENT[$m]=$(free_port)
        ETCD_PEER[$m]=$(free_port)
done
CLUSTER="c1=http://127.0.0.1:${ETCD_PEER[c1]},c2=http://127.0.0.1:${ETCD_PEER[c2]},c3=http://127.0.0.1:${ETCD_PEER[c3]}"
for m in c1 c2 c3; do etcd_start "$m" "$CLUSTER"; done
ENDPOINTS="http://127.0.0.1:${ETCD_CLIENT[c1]},http://127.0.0.1:${ETCD_CLIENT[c2]},http://127.0.0.1:${ETCD_CLIENT[c3]}"
etcd_wait_healthy "$ENDPOINTS"
put_team 3
rm -rf "$TMP/n1" "$TMP/n2"
TTL=6 # n1 is stopped below while a member is down and its cluster elects a leader
node_start 1
node_start 2
wait_usage sessions_quota 3 1 2
# n1's watch is on c1 (its first endpoint). Stopped, c1 down, a quota written and the history
# compacted meanwhile: on its return n1's watch resumes on c2 from a compacted revision, so
# it reads teams and slots again whole
kill -STOP "${NODE_PID[1]}"
etcd_stop c1 # the first endpoint of every node
put_team 2
ectl put /elsewhere/x y >/dev/null # etcd keeps the compaction's own revision: one more
rev=$(ectl get /elsewhere/x -w json | jq -r .header.revision)
ectl compact "$rev" >/dev/null
kill -CONT "${NODE_PID[1]}"
wait_usage sessions_quota 2 1 2
grep -q "etcd compacted its history up to revision $rev" "$TMP/n1/pomed.log" ||
        fail "n1's watch did not say it read everything again after the compaction: $(grep fleet "$TMP/n1/pomed.log" | tail -5)"
pass "(f0) a watch resumed past etcd's compaction reads teams and slots again whole"
create_on 1
assert_status 201 "a create on n1 with member c1 down"
create_on 2
assert_status 201 "a create on n2 with member c1 down"
create_on 1
assert_status 402 "a create beyond quota 2 with member c1 down"
wait_usage sessions_used 2 1 2
pass "(f1) 3-member cluster, c1 down: the nodes use c2/c3; quota 2 holds"
etcd_stop c2
deadline 15
while :; do
        create_on 2
        [[ $STATUS == 402 || $STATUS == 503 ]] || fail "a create with 2 of 3 members down answered $STATUS: $BODY"
        [[ $STATUS == 503 && $(jq -r .error.details.error <<<"$BODY") == *"no leader (quorum lost) since"* ]] && break
        before_deadline || fail "creates with 2 of 3 members down do not say etcd lost its quorum: $BODY"
        sleep 0.2
done
assert_jq .error.type ledger_unavailable
msg=$(jq -r .error.details.error <<<"$BODY")
pass "(f2) quorum lost: 503 ledger_unavailable ($msg)"
for m in c1 c2; do etcd_start "$m" "$CLUSTER"; done
etcd_wait_healthy "$ENDPOINTS"
node_stop 1 TERM
node_stop 2 TERM
sanitizer_check
assert_eq "$(n_slot_keys)" 0 "slot keys once both nodes left the cluster"
pass "(f3) quorum back: both nodes leave cleanly"
for m in c1 c2 c3; do etcd_stop "$m"; done

# (h) TLS: etcd asks for a client certificate; a node with fleet.etcd cert/key/ca joins and
# admits, a node without its certificate is refused at start with etcd's TLS error
command -v openssl >/dev/null || skip "openssl is not installed (TLS case)"
P=$TMP/pki
mkdir -p "$P"
(
        cd "$P"
        openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=pome test CA" \
                -keyout ca.key -out ca.crt 2>/dev/null
        openssl req -newkey rsa:2048 -nodes -subj "/CN=etcd" -keyout server.key -out server.csr 2>/dev/null
        # clientAuth too: etcd's HTTP gateway dials its own gRPC server with this certificate
        # (without it every gateway call is 'connection closed' under --client-cert-auth)
        printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
                -extfile server.ext -out server.crt 2>/dev/null
        openssl req -newkey rsa:2048 -nodes -subj "/CN=pomed" -keyout client.key -out client.csr 2>/dev/null
        printf 'extendedKeyUsage=clientAuth\n' >client.ext
        openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
                -extfile client.ext -out client.crt 2>/dev/null
) || fail "openssl could not make the test PKI"
ETCD_CLIENT[t1]=$(free_port)
ETCD_PEER[t1]=$(free_port)
ENDPOINTS=https://127.0.0.1:${ETCD_CLIENT[t1]}
etcd --name t1 --data-dir "$TMP/etcd-t1" \
        --listen-client-urls "$ENDPOINTS" --advertise-client-urls "$ENDPOINTS" \
        --listen-peer-urls "http://127.0.0.1:${ETCD_PEER[t1]}" \
        --initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PEER[t1]}" \
        --initial-cluster "t1=http://127.0.0.1:${ETCD_PEER[t1]}" \
        --cert-file "$P/server.crt" --key-file "$P/server.key" \
        --trusted-ca-file "$P/ca.crt" --client-cert-auth >>"$TMP/etcd-t1.log" 2>&1 &
ETCD_PID[t1]=$!
EXTRA_PIDS+=("$!")
ECTL_TLS=(--cacert "$P/ca.crt" --cert "$P/client.crt" --key "$P/client.key")
deadline 20
until ectl endpoint health >/dev/null 2>&1; do
        before_deadline || fail "etcd with TLS did not become healthy: $(tail -5 "$TMP/etcd-t1.log")"
        sleep 0.1
done
put_team 1
rm -rf "$TMP/n1"
# a node without a client certificate: refused at start
mkdir -p "$TMP/n1/state"
cat >"$TMP/n1/pomed.conf" <<CONF
control_listen: 127.0.0.1:0
gateway_listen: 127.0.0.1:0
state_dir: $TMP/n1/state
bus: none
fleet:
  node: n1
  etcd:
    endpoints: $ENDPOINTS
    ca: $P/ca.crt
CONF
set +e
timeout 30 "$POMED" --config "$TMP/n1/pomed.conf" >"$TMP/n1/pomed.log" 2>&1
rc=$?
set -e
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "a node without its client certificate started (exit $rc)"
grep -q "fleet: cannot join through etcd ($ENDPOINTS).*fleet.etcd.cert and key" "$TMP/n1/pomed.log" ||
        fail "the refusal of a node without a client certificate: $(tail -3 "$TMP/n1/pomed.log")"
refusal=$(grep -o "fleet: cannot join through etcd.*" "$TMP/n1/pomed.log" | head -1)
# with it: joins, admits, leaves
cat >>"$TMP/n1/pomed.conf" <<CONF
    cert: $P/client.crt
    key: $P/client.key
CONF
"$POMED" --config "$TMP/n1/pomed.conf" >>"$TMP/n1/pomed.log" 2>&1 &
NODE_PID[1]=$!
EXTRA_PIDS+=("$!")
deadline 20
until [[ -f $TMP/n1/state/pomed.json ]]; do
        kill -0 "${NODE_PID[1]}" 2>/dev/null || fail "the TLS node exited during start-up: $(tail -5 "$TMP/n1/pomed.log")"
        before_deadline || fail "the TLS node did not start within 20 s"
        sleep 0.05
done
NODE_CTL[1]=$(jq -r .control_url "$TMP/n1/state/pomed.json")
create_on 1
assert_status 201 "a create through etcd over TLS"
create_on 1
assert_status 402 "a create beyond quota 1 over TLS"
assert_eq "$(n_slot_keys n1_)" 1 "slot keys over TLS"
node_stop 1 TERM
assert_eq "$(n_slot_keys)" 0 "slot keys once the TLS node left"
sanitizer_check
pass "(h) etcd over TLS with client certificates: admitted, refused beyond quota, left; without a certificate: $refusal"
