#!/usr/bin/env bash
# The state directory fills mid-churn (a tmpfs with a size), with writes from several
# clients and creates in flight, and stays full longer than limits.request_timeout:
#  - while it is full, creates and twin calls answer 507 insufficient_storage (in the control
#    API's and each twin's envelope), /healthz says why, and no sandbox ends;
#  - every write answered 2xx has its tape row on disk; every change in a twin's world has
#    one (also those of calls held past the request timeout and answered 507); no tape line
#    is cut short;
#  - once space returns the same pomed writes what it kept and serves again, without a
#    restart: the same sandboxes take calls, a new one is created.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root

mkdir -p "$TMP/state"
mount -t tmpfs -o size=16m tmpfs "$TMP/state" || skip "cannot mount a tmpfs (needs CAP_SYS_ADMIN)"
PIDS=()
trap 'rc=$?; touch "$TMP/stop"; wait "${PIDS[@]}" 2>/dev/null; umount -l "$TMP/state" 2>/dev/null; (exit $rc); cleanup' EXIT
start_pomed "limits:" "  request_timeout: 2s"

create_sandbox github slack
A=$SID A_TOKEN=$TOKEN A_GH=$(rest_url github) A_SLACK=$(jq -r .per_twin.slack.base_url <<<"$CREATED")
[[ $A_SLACK != null ]] || A_SLACK=$(rest_url slack)
create_sandbox github
B=$SID B_TOKEN=$TOKEN B_GH=$(rest_url github)

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
curl -s "$CONTROL/healthz" >"$TMP/healthz"
assert_eq "$(jq -c '.state_dir | [.full, (.error != null)]' "$TMP/healthz")" "[true,true]" \
        "/healthz says the state directory cannot be written"
pass "full: creates and twin calls answer 507 in their surface's envelope; /healthz says so"
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
