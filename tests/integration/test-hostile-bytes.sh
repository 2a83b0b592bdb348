#!/usr/bin/env bash
# Hostile bytes in forms, JSON, queries and headers (issue 6, finding 2): NUL, control
# bytes, invalid UTF-8, 1 MB values, 10 000 fields and deep nesting, sent to every Slack
# method and to GitHub's create issue and create comment. For each request: the answer is
# below 500, or a 500 in the twin's own envelope that is taped; the pods keep their pids;
# the sandbox stays open; and the world (/_pome/state) changes exactly as the tape row
# says (state_mutation false: unchanged; true: the row's state_delta.after is in it).
source "$(dirname "$0")/lib.sh"
require_root
command -v python3 >/dev/null || skip "python3 is not installed (builds the large bodies)"

# room for the oversized reply below; and for the huge row's copies (the world's, the
# handler's, the tape's before and after: ~6 x 9 MB, past the default 64M)
start_pomed "limits:" "  max_body: 12M" "pod:" "  memory_max: 256M"

FORM=application/x-www-form-urlencoded
mkdir -p "$TMP/bodies"

# body_file NAME: writes bytes from stdin into $TMP/bodies/NAME, prints the path.
body_file() {
        cat >"$TMP/bodies/$1"
        echo "$TMP/bodies/$1"
}

# pod_pids: "github=<pid> slack=<pid>" of the current sandbox, and its state.
pod_pids() {
        api GET "/v1/sandboxes/$SID"
        jq -r '"\(.state) github=\(.per_twin.github.pod.pid) slack=\(.per_twin.slack.pod.pid)"' <<<"$BODY"
}

# state TWIN FILE: the twin's /_pome/state, sorted, into FILE.
state() {
        curl -s -H "Authorization: Bearer $TOKEN" "$(rest_url "$1")/_pome/state" | jq -S . >"$2" ||
                fail "$1 /_pome/state is not JSON"
}

# same_pods WHAT: the sandbox is open and its pods have the pids they started with.
same_pods() {
        local now
        now=$(pod_pids)
        now=${now/#ready /running }
        [[ $now == "running ${PIDS#* }" ]] || fail "$1: pods or sandbox changed: $PIDS → $now"
}

# hostile TWIN METHOD PATH BODYFILE CTYPE LABEL [CURL ARGS…]: one request, every check.
# The world before is the world after the previous call ($TMP/s1.TWIN), and the tape's
# length is counted in ROWS_TWIN: each call reads one state and one tape.
N_CALLS=0
hostile() {
        local twin=$1 method=$2 path=$3 file=$4 ctype=$5 label=$6
        shift 6
        local url
        url="$(rest_url "$twin")$path"
        [[ -f $TMP/s1.$twin ]] || state "$twin" "$TMP/s1.$twin"
        mv "$TMP/s1.$twin" "$TMP/s0"
        local rows_var=ROWS_$twin
        local rows0=${!rows_var:-0}
        local args=(-s -o "$TMP/resp" -w '%{http_code}' -X "$method" -H "Authorization: Bearer $TOKEN")
        [[ -n $file ]] && args+=(-H "Content-Type: $ctype" --data-binary "@$file")
        STATUS=$(curl "${args[@]}" "$@" "$url")
        N_CALLS=$((N_CALLS + 1))
        [[ ${CHECK_PIDS:-1} == 1 ]] && same_pods "$label → $twin $path"
        [[ $STATUS =~ ^[1-5][0-9][0-9]$ ]] || fail "$label → $twin $path: no HTTP answer ($STATUS)"
        curl -s -H "Authorization: Bearer $TOKEN" "$(rest_url "$twin")/_pome/events" |
                jq -c 'length, .[-1]' >"$TMP/events"
        local rows1
        rows1=$(head -1 "$TMP/events")
        printf -v "$rows_var" %s "$rows1"
        # The front's own refusals come before any pod and add no row: 413 (max_body) and 400
        # for a request-target that is not printable ASCII (raw bytes in a path or query).
        if [[ ($STATUS == 413 || ($STATUS == 400 && $label == *raw*)) && $rows1 -eq $rows0 ]]; then
                cp "$TMP/s0" "$TMP/s1.$twin"
                return 0
        fi
        [[ $rows1 -eq $((rows0 + 1)) ]] || fail "$label → $twin $path: $((rows1 - rows0)) tape rows for one call"
        tail -1 "$TMP/events" >"$TMP/row"
        local taped mutation error
        read -r taped mutation error < <(jq -r '"\(.status) \(.state_mutation) \(.error != null)"' "$TMP/row")
        [[ $taped == "$STATUS" ]] || fail "$label → $twin $path: taped status $taped, answered $STATUS"
        if [[ $STATUS -ge 500 ]]; then
                # a 500 of the twin itself: its own envelope, and it says why
                jq -e 'has("message") or has("ok")' "$TMP/resp" >/dev/null ||
                        fail "$label → $twin $path: $STATUS not in the twin's envelope: $(head -c 300 "$TMP/resp")"
                [[ $error == true ]] || fail "$label → $twin $path: 500 taped without an error"
        fi
        state "$twin" "$TMP/s1.$twin"
        if [[ $mutation == true ]]; then
                [[ $STATUS -lt 400 ]] || fail "$label → $twin $path: an error reply ($STATUS) changed the world"
                ! cmp -s "$TMP/s0" "$TMP/s1.$twin" || fail "$label → $twin $path: taped a mutation, world unchanged"
                jq -c '.state_delta.after' "$TMP/row" >"$TMP/after"
                jq -e --slurpfile a "$TMP/after" '$a[0] == null or any(..; . == $a[0])' "$TMP/s1.$twin" >/dev/null ||
                        fail "$label → $twin $path: the taped state_delta.after is not in the world"
        else
                cmp -s "$TMP/s0" "$TMP/s1.$twin" ||
                        fail "$label → $twin $path: world changed without a taped mutation ($STATUS): $(diff "$TMP/s0" "$TMP/s1.$twin" | head -5)"
        fi
        [[ ${VERBOSE:-} ]] && echo "  ${SECONDS}s $label → $twin $method $path: $STATUS mutation=$mutation"
        return 0
}

# fresh_sandbox: a new sandbox (short tapes keep every check cheap).
fresh_sandbox() {
        [[ -n ${SID:-} ]] && discard "$SID"
        create_sandbox github slack
        PIDS=$(pod_pids)
        rm -f "$TMP"/s1.*
        ROWS_github=0 ROWS_slack=0
}

# The hostile values, form-encoded (percent escapes and raw bytes) and as JSON values.
python3 - "$TMP/bodies" <<'EOF'
import json, sys, os
d = sys.argv[1]
def w(name, data):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
forms = {
    "pct00": b"%00x", "pct01": b"a%01b", "pctff": b"%FF", "overlong": b"%C0%AE%C0%AE",
    "rawff": b"\xff\xfe", "ctl": b"%1b[31m%7f%08", "big": b"A" * (1 << 20),
    "bigctl": b"\x01" * (1 << 20), "bigpct": b"%01" * (300 * 1024),
}
for k, v in forms.items():
    # every field a method reads, all hostile but the channel, so the call gets far
    w("form-" + k, b"channel=C_GENERAL&text=" + v + b"&name=" + v + b"&timestamp=" + v +
      b"&ts=" + v + b"&user=" + v + b"&cursor=" + v + b"&title=" + v + b"&body=" + v)
    w("formkey-" + k, v + b"=1&channel=C_GENERAL&text=ok")
    w("form1-" + k, b"channel=C_GENERAL&name=thumbsup&title=t&text=" + v + b"&body=" + v)
w("form-fields", "channel=C_GENERAL&text=x&" + "&".join("f%d=%d" % (i, i) for i in range(10000)))
w("form-deep", "channel=C_GENERAL&text=x&a" + "[b]" * 5000 + "=1")
jsons = {
    "nul": "\u0000x", "ctl": "a\u0001\u001b[31m\u007f", "ff": "\ufffd\u00ff",
    "big": "A" * (1 << 20), "bigctl": "\u0001" * (1 << 18),
}
for k, v in jsons.items():
    w("json-" + k, json.dumps({"channel": "C_GENERAL", "text": v, "name": v, "timestamp": v,
                               "ts": v, "user": v, "title": v, "body": v}))
    w("json1-" + k, json.dumps({"channel": "C_GENERAL", "text": v, "title": "t", "body": v}))
# A commit message of 1.7 M control characters: 10 MB of JSON in, and three times that
# out (request_body, the reply's commit, the row's copy of the reply) - past one frame.
w("json-bigmsg", json.dumps({"message": "\u0001" * (1700 * 1024), "content": "aGVsbG8="}))
w("json-rawff", b'{"channel":"C_GENERAL","text":"\xff\xfe","title":"\xff","body":"\xc0\xae"}')
w("json-fields", json.dumps(dict({"channel": "C_GENERAL", "text": "x", "title": "t"},
                                 **{"f%d" % i: i for i in range(10000)})))
for depth in (50, 100, 3000):
    w("json-deep%d" % depth, '{"channel":"C_GENERAL","title":"t","text":"x","blocks":' +
      "[" * depth + "]" * depth + "}")
EOF

SLACK_METHODS=(auth.test chat.postMessage conversations.history conversations.list
        conversations.replies reactions.add users.list users.profile.get)

fresh_sandbox
[[ $PIDS =~ ^(ready|running)\ github=[0-9]+\ slack=[0-9]+$ ]] || fail "unexpected sandbox: $PIDS"

# The measured case on main: a 5-byte NUL in a form killed the Slack pod.
printf 'channel=C_GENERAL&text=%%00x' | body_file nul5 >/dev/null
hostile slack POST /chat.postMessage "$TMP/bodies/nul5" $FORM "form %00"
assert_eq "$(jq -r .ok "$TMP/resp")" false "a NUL is refused in Slack's envelope"
assert_eq "$(jq -r .error "$TMP/resp")" invalid_form_data "Slack's word for it"
pass "a %00 in a form answers Slack's invalid_form_data; the pod lives"

small_forms=(pct00 pct01 pctff overlong rawff ctl)
small_jsons=(nul ctl rawff deep50 deep100 deep3000)
CHECK_PIDS=0 # once per method below: a dead pod fails the sandbox, which every call sees
for m in "${SLACK_METHODS[@]}"; do
        fresh_sandbox
        for v in "${small_forms[@]}"; do
                hostile slack POST "/$m" "$TMP/bodies/form-$v" $FORM "form $v"
        done
        for v in "${small_jsons[@]}"; do
                hostile slack POST "/$m" "$TMP/bodies/json-$v" application/json "json $v"
        done
        # queries and headers: percent escapes, raw bytes
        hostile slack GET "/$m?channel=C_GENERAL&cursor=%00&limit=%FF" "" "" "query %00 %FF"
        hostile slack GET "/$m?channel=C_GENERAL&x=$(printf '\xff\xc0')" "" "" "query raw \\xff"
        assert_status 400 "a raw \\xff in the query (not printable ASCII: refused by the front)"
        hostile slack POST "/$m" "$TMP/bodies/form-pct01" $FORM "header \\xff" \
                -H "X-Hostile: $(printf 'a\xffb')"
        same_pods "after $m"
done
fresh_sandbox
for v in "${small_forms[@]}"; do
        hostile slack POST /chat.postMessage "$TMP/bodies/formkey-$v" $FORM "form key $v"
done
hostile slack POST /chat.postMessage "$TMP/bodies/form-fields" $FORM "form 10 000 fields"
hostile slack POST /chat.postMessage "$TMP/bodies/json-fields" application/json "json 10 000 fields"
hostile slack POST /chat.postMessage "$TMP/bodies/form-deep" $FORM "form deep keys"
same_pods "after the keys"
pass "every Slack method: forms, JSON, queries and headers with NUL, control bytes, bad UTF-8, deep nesting; keys and 10 000 fields"

GH_PATHS=("/repos/acme/api/issues" "/repos/acme/api/issues/1/comments")
for p in "${GH_PATHS[@]}"; do
        fresh_sandbox
        for v in "${small_jsons[@]}" fields; do
                hostile github POST "$p" "$TMP/bodies/json-$v" application/json "json $v"
        done
        for v in "${small_forms[@]}"; do
                hostile github POST "$p" "$TMP/bodies/form-$v" $FORM "form $v"
        done
        hostile github POST "$p?title=%00" "$TMP/bodies/json-ctl" application/json "query %00"
        same_pods "after $p"
done
CHECK_PIDS=1
# GitHub reads every body as JSON, whatever its Content-Type, and a POST's query not at all
hostile github POST /repos/acme/api/issues "$TMP/bodies/form-big" $FORM "a form body"
assert_eq "$STATUS" 400 "a form body to GitHub"
assert_eq "$(jq -r .message "$TMP/resp")" "Problems parsing JSON" "GitHub's words for it"
pass "GitHub create issue and comment: the same values; a form body is not JSON"

# 1 MB values: a fresh sandbox each, so that every tape read stays small.
for v in big bigctl bigpct; do
        for m in chat.postMessage reactions.add; do
                fresh_sandbox
                hostile slack POST "/$m" "$TMP/bodies/form1-$v" $FORM "form 1 MB $v"
        done
        fresh_sandbox
        hostile github POST /repos/acme/api/issues "$TMP/bodies/form1-$v" $FORM "form 1 MB $v"
done
for v in big bigctl; do
        fresh_sandbox
        hostile slack POST /chat.postMessage "$TMP/bodies/json1-$v" application/json "json 1 MB $v"
        fresh_sandbox
        hostile github POST /repos/acme/api/issues "$TMP/bodies/json1-$v" application/json "json 1 MB $v"
        fresh_sandbox
        hostile github POST /repos/acme/api/issues/1/comments "$TMP/bodies/json1-$v" application/json "json 1 MB $v"
done
pass "1 MB values (letters, raw control bytes, percent escapes) in forms and JSON"

# A reply too large for a frame (a 10 MB commit message, escaped, is in the reply three
# times over) is a 500 in the twin's envelope, and the write it answered was undone.
fresh_sandbox
hostile github PUT /repos/acme/api/contents/big.txt "$TMP/bodies/json-bigmsg" application/json \
        "oversized reply"
assert_eq "$STATUS" 500 "a reply larger than a frame"
assert_eq "$(jq -r .state_mutation "$TMP/row")" false "the write was undone"
assert_eq "$(jq -r .message "$TMP/resp")" "Server Error" "GitHub's own 500"
hostile github GET /repos/acme/api/contents/big.txt "" "" "the file after the oversized reply"
assert_eq "$STATUS" 404 "no file was committed"
hostile github POST /repos/acme/api/issues "$TMP/bodies/json-ctl" application/json "after the oversized reply"
assert_eq "$STATUS" 201 "the pod serves on"
discard "$SID"
pass "an oversized reply: 500 in GitHub's envelope, world unchanged, pod serving"

# A small write to a row too large for the tape (an issue holding 150 comments of 60 000
# characters: its before and after pass one frame) stands: 200, the title changed, and
# the tape row says the row was left out rather than undoing or failing the call.
fresh_sandbox
python3 -c 'import json; print(json.dumps({"body": "c" * 60000}))' | body_file comment60k >/dev/null
for i in $(seq 150); do
        code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
                --data-binary "@$TMP/bodies/comment60k" "$(rest_url github)/repos/acme/api/issues/1/comments")
        [[ $code == 201 ]] || fail "comment $i on the large issue: $code"
done
ROWS_github=$(curl -s -H "Authorization: Bearer $TOKEN" "$(rest_url github)/_pome/events" | jq length)
rm -f "$TMP/s1.github"
printf '{"title":"renamed on a huge row"}' | body_file title >/dev/null
hostile github PATCH /repos/acme/api/issues/1 "$TMP/bodies/title" application/json "a title on a 9 MB row"
assert_eq "$STATUS" 200 "a small write to a row larger than the tape can repeat"
assert_eq "$(jq -r .state_mutation "$TMP/row")" true "taped as the change it is"
jq -e '.state_delta.omitted | type == "string"' "$TMP/row" >/dev/null ||
        fail "the tape row does not say its state_delta was left out: $(jq -c .state_delta "$TMP/row" | head -c 300)"
jq -e '[.. | objects | select(.title? == "renamed on a huge row")] | length == 1' "$TMP/s1.github" >/dev/null ||
        fail "the new title is not in the world"
discard "$SID"
pass "a small write to a huge row: 200, the world and the tape say the same, the row left out of the tape"

if grep -E "pod \(pid [0-9]+\)" "$TMP/pomed.log" | grep -v "killed" | grep -q .; then
        fail "a pod died: $(grep -E 'pod \(pid' "$TMP/pomed.log" | head -3)"
fi
echo "$N_CALLS hostile requests"
pass "no pod died, nothing logged as a pod death"
