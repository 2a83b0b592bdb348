#!/usr/bin/env bash
# Tapes are read from disk a page at a time: /_pome/events?after=&limit= pages through a
# 30 MB tape (the pages add up to the whole array, Link rel="next" until the last), pomed's
# memory does not grow with the tape, and another sandbox is served all the while. A
# sandbox whose tapes reach limits.max_tape ends (failed, tape_full) after the call that
# crossed it, which is taped and answered; nothing is silently dropped.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
# The peak-RSS check below measures what reading a tape holds, not what ASan's quarantine
# keeps of every freed buffer (256 MiB by default): with it, the other sandbox's calls made
# meanwhile — more of them on a loaded host — counted as growth.
export ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=4"
start_pomed "limits:" "  max_tape: 34M"

create_sandbox github
A=$SID A_TOKEN=$TOKEN A_GH=$(rest_url github)
create_sandbox slack
B_TOKEN=$TOKEN B_SL=$(rest_url slack)

# 30 rows of ~1 MB (bodies sent to a route no twin serves: a loud 501, still taped),
# then 40 small ones.
{ printf '{"blob":"'; head -c 1000000 /dev/zero | tr '\0' x; printf '"}'; } >"$TMP/big.json"
for i in $(seq 30); do
        twin_call POST "$A_GH/no/such/route/$i" "$A_TOKEN" "@$TMP/big.json"
        assert_status 501 "big row $i"
done
for i in $(seq 40); do
        twin_call GET "$A_GH/repos/acme/api/issues/1" "$A_TOKEN"
        assert_status 200 "small row $i"
done
tape=$TMP/state/runs/$A/github.tape.jsonl
assert_eq "$(wc -l <"$tape")" 70 "rows on the tape"
(($(stat -c %s "$tape") > 30000000)) || fail "the tape is only $(stat -c %s "$tape") bytes"

# Another sandbox keeps being served while the big tape is read.
(
        n=0
        while [[ ! -e $TMP/stop ]]; do
                code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST \
                        -H "Authorization: Bearer $B_TOKEN" "$B_SL/auth.test")
                [[ $code == 200 ]] || { echo "bad:$code" >>"$TMP/b.log"; }
                n=$((n + 1))
        done
        echo "calls:$n" >>"$TMP/b.log"
) &
EXTRA_PIDS+=($!)

# clear_refs 5 resets the peak RSS (proc(5)), so VmHWM tells what reading the tape cost
echo 5 >"/proc/$POMED_PID/clear_refs"
hwm_before=$(awk '/VmRSS/ {print $2}' "/proc/$POMED_PID/status")
url="$A_GH/_pome/events?limit=4"
pages=0
: >"$TMP/paged.ids"
while [[ -n $url ]]; do
        curl -s -D "$TMP/h" -o "$TMP/page" -H "Authorization: Bearer $A_TOKEN" "$url"
        jq -r '.[].event_id' "$TMP/page" >>"$TMP/paged.ids" || fail "page $pages is not JSON"
        pages=$((pages + 1))
        url=$(sed -n 's/^[Ll]ink: <\(.*\)>; rel="next".*/\1/p' "$TMP/h" | tr -d '\r')
        ((pages < 100)) || fail "the pages never end"
done
twin_call GET "$A_GH/_pome/events" "$A_TOKEN"
jq -r '.[].event_id' <<<"$BODY" >"$TMP/all.ids"
cmp -s "$TMP/paged.ids" "$TMP/all.ids" || fail "the pages do not add up to the whole tape"
assert_eq "$(wc -l <"$TMP/all.ids")" 70 "rows read back"
jq -r '.[].event_id' <(jq -c '.' <(cat "$tape" | jq -s .)) | cmp -s - "$TMP/all.ids" ||
        fail "/_pome/events differs from the tape file"
hwm_after=$(awk '/VmHWM/ {print $2}' "/proc/$POMED_PID/status")
touch "$TMP/stop"
wait "${EXTRA_PIDS[@]}"
EXTRA_PIDS=()
grep -q "^bad:" "$TMP/b.log" && fail "the other sandbox was refused while the tape was read: $(cat "$TMP/b.log")"
grep -q "^calls:" "$TMP/b.log" || fail "the other sandbox's client did not finish"
((hwm_after - hwm_before < 16384)) ||
        fail "pomed's peak RSS grew by $((hwm_after - hwm_before)) kB reading a 30 MB tape"
pass "a 30 MB tape read in $pages pages and whole, $((hwm_after - hwm_before)) kB of peak RSS more, another sandbox served meanwhile ($(grep calls: "$TMP/b.log"))"

twin_call GET "$A_GH/_pome/events?after=req_nosuchevent" "$A_TOKEN"
assert_status 400 "an unknown cursor"
twin_call GET "$A_GH/_pome/events?limit=0" "$A_TOKEN"
assert_status 400 "limit=0"
twin_call GET "$A_GH/_pome/events?limit=1001" "$A_TOKEN"
assert_status 400 "limit=1001"
twin_call GET "$A_GH/_pome/events?limit=1%00x" "$A_TOKEN"
assert_status 400 "a NUL in limit (not read as an absent limit)"
twin_call GET "$A_GH/_pome/events?after=$(head -1 "$TMP/all.ids")%00zz&limit=1" "$A_TOKEN"
assert_status 400 "a NUL in after (not read as an absent cursor)"
last=$(tail -1 "$TMP/all.ids")
twin_call GET "$A_GH/_pome/events?after=$last" "$A_TOKEN"
assert_status 200 "a page after the last row"
assert_eq "$BODY" "[]" "the page after the last row"
pass "cursor and limit are checked; the page after the last row is empty"

# The cap: 34M in all; a few more ~1 MB rows cross it.
for i in $(seq 10); do
        twin_call POST "$A_GH/no/such/route/cap$i" "$A_TOKEN" "@$TMP/big.json"
        [[ $STATUS == 501 ]] || break
done
assert_status 410 "a call after the tape reached limits.max_tape"
assert_jq .error.details.reason tape_full
api GET "/v1/sandboxes/$A"
assert_jq .state failed
assert_jq .reason tape_full
crossing=$(grep -c '/no/such/route/cap' "$tape")
((crossing >= 1)) || fail "the call that crossed the cap is not on the tape"
[[ $crossing -eq $((i - 1)) ]] || fail "$((i - 1)) calls were answered, $crossing taped"
pass "limits.max_tape ends the sandbox (tape_full) after the crossing call, which is taped"
