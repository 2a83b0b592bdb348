#!/usr/bin/env bash
# The state directory fills mid-churn (a tmpfs with a size), with writes from several
# clients, creates and finalizes in flight, and stays full longer than limits.request_timeout:
#  - while it is full, creates and twin calls answer 507 insufficient_storage (in the control
#    API's and each twin's envelope), /healthz says why, and no sandbox ends;
#  - every write answered 2xx has its tape row on disk; every change in a twin's world has
#    one (also those of calls held past the request timeout and answered 507); no tape line
#    is cut short;
#  - a finalize is graded with its run whole, or answered with verdict_error "storage: …"
#    (never a verdict from files that are not whole), or refused 507 and left open; the
#    record says what the answer said and every run file is whole JSON;
#  - once space returns the same pomed writes what it kept and serves again, without a
#    restart: the same sandboxes take calls, a new one is created, a refused finalize grades.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root

mkdir -p "$TMP/state"
mount -t tmpfs -o size=16m tmpfs "$TMP/state" || skip "cannot mount a tmpfs (needs CAP_SYS_ADMIN)"
PIDS=()
trap 'rc=$?; touch "$TMP/stop"; wait "${PIDS[@]}" 2>/dev/null || true; umount -l "$TMP/state" 2>/dev/null || true; cleanup $rc' EXIT
start_pomed "limits:" "  request_timeout: 2s"

create_sandbox github slack
A=$SID A_TOKEN=$TOKEN A_GH=$(rest_url github) A_SLACK=$(jq -r .per_twin.slack.base_url <<<"$CREATED")
[[ $A_SLACK != null ]] || A_SLACK=$(rest_url slack)
create_sandbox github
B=$SID B_TOKEN=$TOKEN B_GH=$(rest_url github)
api POST /v1/sandboxes "$(jq -nc --rawfile task "$SRC/examples/triage/task.md" '{twins: ["github", "slack"], task_markdown: $task}')"
assert_status 201 "a sandbox with a task, to finalize on the full disk"
F=$(jq -r .session_id <<<"$BODY")

# writer NAME URL TOKEN KIND: writes until $TMP/stop exists; logs "status request-id" lines
writer() {
        local name=$1 url=$2 token=$3 kind=$4 i=0 st rid
        while [[ ! -e $TMP/stop ]]; do
                i=$((i + 1))
                if [[ $kind == github ]]; then
                        st=$(curl -s -o /dev/null -D "$TMP/h.$name" -w '%{http_code}' -m 20 \
                                -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
                                --data-binary "{\"body\":\"$name $i\"}" "$url/repos/acme/api/issues/1/comments")
                else
                        st=$(curl -s -o /dev/null -D "$TMP/h.$name" -w '%{http_code}' -m 20 \
                                -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
                                --data-binary "{\"channel\":\"C_GENERAL\",\"text\":\"$name $i\"}" \
                                "$url/chat.postMessage")
                fi
                rid=$(tr -d '\r' <"$TMP/h.$name" | awk 'tolower($1)=="x-request-id:" {print $2}')
                echo "$st $rid" >>"$TMP/log.$name"
        done
}
creator() {
        while [[ ! -e $TMP/stop ]]; do
                curl -s -o /dev/null -w '%{http_code}\n' -m 20 -H "Authorization: Bearer $API_KEY" \
                        -H 'Content-Type: application/json' --data-binary '{"twins":["stripe"]}' \
                        "$CONTROL/v1/sandboxes" >>"$TMP/log.creates"
        done
}
# finalizer: a sandbox with a task, one write, its finalize; logs "sid create finalize body"
TASK=$(cat "$SRC/examples/triage/task.md")
finalizer() {
        local body st sid
        body=$(jq -nc --arg task "$TASK" '{twins: ["github", "slack"], task_markdown: $task}')
        while [[ ! -e $TMP/stop ]]; do
                st=$(curl -s -o "$TMP/fc" -w '%{http_code}' -m 20 -H "Authorization: Bearer $API_KEY" \
                        -H 'Content-Type: application/json' --data-binary "$body" "$CONTROL/v1/sandboxes")
                if [[ $st != 201 ]]; then
                        echo "- $st - -" >>"$TMP/log.finalizes"
                        sleep 0.1
                        continue
                fi
                sid=$(jq -r .session_id "$TMP/fc")
                curl -s -o /dev/null -m 20 -H "Authorization: Bearer $(jq -r .token "$TMP/fc")" \
                        -H 'Content-Type: application/json' --data-binary '{"body":"seen"}' \
                        "$(jq -r .per_twin.github.rest_url "$TMP/fc")/repos/acme/api/issues/1/comments"
                st=$(curl -s -o "$TMP/ff" -w '%{http_code}' -m 30 -X POST \
                        -H "Authorization: Bearer $API_KEY" "$CONTROL/v1/sandboxes/$sid/finalize")
                echo "$sid 201 $st $(jq -c '{state, verdict: .verdict.state, verdict_error}' "$TMP/ff" 2>/dev/null ||
                        echo '"not JSON"')" >>"$TMP/log.finalizes"
        done
}
finalizer &
PIDS+=($!)
writer a1 "$A_GH" "$A_TOKEN" github &
PIDS+=($!)
writer a2 "$A_GH" "$A_TOKEN" github &
PIDS+=($!)
writer as "$A_SLACK" "$A_TOKEN" slack &
PIDS+=($!)
writer b1 "$B_GH" "$B_TOKEN" github &
PIDS+=($!)
creator &
PIDS+=($!)
sleep 1
dd if=/dev/zero of="$TMP/state/filler" bs=64k 2>/dev/null || true
sleep 1

# full: refused in each surface's envelope, said by /healthz
api POST /v1/sandboxes '{"twins":["github"]}'
assert_status 507 "a create on a full state directory"
assert_jq .error.type insufficient_storage
twin_call GET "$B_GH/repos/acme/api/issues/1" "$B_TOKEN"
assert_status 507 "a GitHub call on a full state directory"
jq -e '.message | test("state directory")' <<<"$BODY" >/dev/null || fail "not GitHub's envelope: $BODY"
twin_call POST "$A_SLACK/chat.postMessage" "$A_TOKEN" '{"channel":"C_GENERAL","text":"x"}'
assert_status 507 "a Slack call on a full state directory"
assert_eq "$(jq -c '[.ok, .error]' <<<"$BODY")" '[false,"insufficient_storage"]' "Slack's envelope"
twin_call POST "$B_GH/mcp" "$B_TOKEN" \
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_issue","arguments":{"owner":"acme","repo":"api","issue_number":1}}}'
assert_status 507 "an MCP call on a full state directory"
assert_eq "$(jq -c '[.jsonrpc, .id, .error.code, .error.data.type, (.error.message | test("state directory"))]' <<<"$BODY")" \
        '["2.0",7,-32000,"insufficient_storage",true]' "MCP's JSON-RPC error envelope"
curl -s "$CONTROL/healthz" >"$TMP/healthz"
assert_eq "$(jq -c '.state_dir | [.full, (.error != null)]' "$TMP/healthz")" "[true,true]" \
        "/healthz says the state directory cannot be written"
pass "full: creates and twin calls answer 507 in their surface's envelope (MCP's JSON-RPC too); /healthz says so"
# a finalize on the full disk says so (checked with the finalizer's below)
api POST "/v1/sandboxes/$F/finalize"
echo "$F 201 $STATUS $(jq -c '{state, verdict: .verdict.state, verdict_error}' <<<"$BODY")" >>"$TMP/log.finalizes"
[[ $STATUS == 507 || $(jq -r .verdict_error <<<"$BODY") == "storage: "* ]] ||
        fail "a finalize on the full disk does not say so: $STATUS $BODY"
pass "a finalize on the full disk: $STATUS $(jq -c '{verdict_error, error: .error.message}' <<<"$BODY")"
# acknowledged means on disk now, not once space returns: the writes answered 2xx so far
# (read first) each have their row in the files while the disk is still full
cat "$TMP"/log.a1 "$TMP"/log.a2 "$TMP"/log.as "$TMP"/log.b1 | awk '$1 ~ /^20/ {print $2}' | sort >"$TMP/acked"
cat "$TMP/state/runs/$A"/*.tape.jsonl "$TMP/state/runs/$B"/*.tape.jsonl |
        { grep -o '"event_id":"[^"]*"' || true; } | cut -d'"' -f4 | sort >"$TMP/rows"
missing=$(comm -23 "$TMP/acked" "$TMP/rows" | head -3 || true)
[[ -z $missing ]] || fail "writes answered 2xx whose rows are not on disk while it is full: $missing"
pass "while full: each of the $(wc -l <"$TMP/acked") writes answered 2xx has its row on disk"
sleep 2.5 # past limits.request_timeout: a held reply is answered 507, its row still kept

rm -f "$TMP/state/filler"
for _ in $(seq 100); do
        grep -q "the state directory takes writes again" "$TMP/pomed.log" && break
        sleep 0.1
done
grep -q "the state directory takes writes again" "$TMP/pomed.log" ||
        fail "pomed did not say it wrote what it kept: $(tail -5 "$TMP/pomed.log")"
sleep 1
touch "$TMP/stop"
wait "${PIDS[@]}"

cat "$TMP"/log.a1 "$TMP"/log.a2 "$TMP"/log.as "$TMP"/log.b1 >"$TMP/all"
n2=$(grep -c '^20[01] ' "$TMP/all" || true)
n507=$(grep -c '^507 ' "$TMP/all" || true)
other=$({ grep -v '^20[01] \|^507 ' "$TMP/all" || true; } | sort | uniq -c | head -5)
[[ -z $other ]] || fail "writes answered other than 2xx or 507: $other"
((n507 > 0)) || fail "no write was refused while the state directory was full"
pass "$n2 writes answered 2xx, $n507 answered 507 insufficient_storage"

# every line of every tape is whole JSON
for f in "$TMP/state/runs/$A"/*.tape.jsonl "$TMP/state/runs/$B"/*.tape.jsonl; do
        jq -ec . "$f" >/dev/null || fail "$(basename "$f") holds a line that is not whole JSON"
done
jq -r .event_id "$TMP/state/runs/$A"/*.tape.jsonl "$TMP/state/runs/$B"/*.tape.jsonl | sort >"$TMP/rows"
awk '$1 ~ /^20/ {print $2}' "$TMP/all" | sort >"$TMP/acked"
missing=$(comm -23 "$TMP/acked" "$TMP/rows" | head -3 || true)
[[ -z $missing ]] || fail "writes answered 2xx with no tape row on disk: $missing"
pass "every write answered 2xx has its tape row on disk; no tape line is cut short"

# every change in a world has its row (the calls held and answered 507 too)
for s in "A $A_GH $A_TOKEN" "B $B_GH $B_TOKEN"; do
        read -r name url token <<<"$s"
        sid=${!name}
        world=$(curl -s -H "Authorization: Bearer $token" \
                "$url/repos/acme/api/issues/1/comments?per_page=100&page=1" | jq length)
        for p in 2 3 4 5 6 7 8 9 10; do
                k=$(curl -s -H "Authorization: Bearer $token" \
                        "$url/repos/acme/api/issues/1/comments?per_page=100&page=$p" | jq length)
                ((k == 0)) && break
                world=$((world + k))
        done
        rows=$(jq -c 'select(.method == "POST" and (.path | endswith("/comments")) and .status == 201)' \
                "$TMP/state/runs/$sid/github.tape.jsonl" | wc -l)
        assert_eq "$rows" "$world" "sandbox $name: comments in the world vs their tape rows"
done
pass "every comment in each world has its row on the tape"

for s in "$A" "$B"; do
        api GET "/v1/sandboxes/$s"
        [[ $(jq -r .state <<<"$BODY") =~ ^(ready|running)$ ]] ||
                fail "sandbox $s ended: $(jq -c '{state, reason}' <<<"$BODY")"
done
twin_call POST "$A_GH/repos/acme/api/issues/1/comments" "$A_TOKEN" '{"body":"after"}'
assert_status 201 "a write once space has returned"
api GET "/v1/sandboxes?state=ready"
other=$(jq -r --arg a "$A" --arg b "$B" '[.data[].session_id | select(. != $a and . != $b)][0] // empty' <<<"$BODY")
[[ -z $other ]] || discard "$other"
create_sandbox github
pass "space returned: the same sandboxes serve, a new one is created, no restart"
grep -c "cannot write .* to the state directory" "$TMP/pomed.log" | grep -qx 1 ||
        fail "the failure is not said exactly once: $(grep -c "cannot write" "$TMP/pomed.log")"
ok_creates=$(grep -c '^201$' "$TMP/log.creates" || true)
bad_creates=$({ grep -v '^201$\|^507$\|^402$' "$TMP/log.creates" || true; } | sort | uniq -c)
[[ -z $bad_creates ]] || fail "creates answered other than 201, 402 or 507: $bad_creates"
pass "creates in flight: $ok_creates answered 201, the others 507 or 402 (quota)"

# finalizes in flight: each answer is true, its record says the same, its run files are whole
graded=0 storage=0 refused=0
while read -r sid cst fst answer; do
        [[ $sid == - ]] && continue
        api GET "/v1/sandboxes/$sid"
        assert_status 200 "the record of $sid"
        case $fst in
        200)
                verr=$(jq -r .verdict_error <<<"$answer")
                if [[ $verr == null ]]; then
                        [[ $(jq -r .verdict <<<"$answer") =~ ^(pass|fail|incomplete)$ ]] ||
                                fail "finalize of $sid: neither a verdict nor an error: $answer"
                        graded=$((graded + 1))
                else
                        [[ $verr == "storage: "* && $(jq -r .verdict <<<"$answer") == null ]] ||
                                fail "finalize of $sid: $answer"
                        storage=$((storage + 1))
                fi
                assert_eq "$(jq -c '{verdict: .verdict.state, verdict_error}' <<<"$BODY")" \
                        "$(jq -c '{verdict, verdict_error}' <<<"$answer")" "the record of $sid vs its finalize"
                for f in "$TMP/state/runs/$sid"/*.json "$TMP/state/runs/$sid"/*.tape.jsonl; do
                        [[ -e $f ]] || continue
                        jq -ec . "$f" >/dev/null || fail "$sid: $(basename "$f") is cut short ($(stat -c %s "$f") bytes)"
                done
                ;;
        507)
                # refused before anything was done: still open, and it grades now there is room
                refused=$((refused + 1))
                [[ $(jq -r .state <<<"$BODY") =~ ^(ready|running)$ ]] ||
                        fail "finalize of $sid refused 507, but the sandbox ended: $(jq -c '{state, reason}' <<<"$BODY")"
                api POST "/v1/sandboxes/$sid/finalize"
                assert_status 200 "finalize of $sid with room again"
                assert_jq .verdict_error null "finalize of $sid with room again"
                ;;
        *) fail "finalize of $sid answered $fst: $answer" ;;
        esac
done <"$TMP/log.finalizes"
((graded + storage + refused > 0)) || fail "no finalize ran during the churn"
pass "finalizes in flight: $graded graded, $storage said storage: …, $refused refused 507 then graded; records true, run files whole"
