# Shared helpers of the integration tests. Each test sources this file, starts
# its own pomed (ephemeral ports, a private state dir, its own cgroup tree) and
# drives it over real HTTP with curl and the real `pome` CLI. Sourced, not run.
set -euo pipefail

BUILD=${POME_BUILD_DIR:?POME_BUILD_DIR is set by ctest}
SRC=${POME_SOURCE_DIR:?POME_SOURCE_DIR is set by ctest}
POMED=$BUILD/supervisor/pomed
POME=$BUILD/cli/pome
POD=$BUILD/pods/pome-pod

skip() {
        echo "skip: $*" >&2
        exit 77
}
fail() {
        echo "FAIL: $*" >&2
        if [[ -n ${TMP:-} && -f $TMP/pomed.log ]]; then
                echo "--- pomed log (last 30 lines)" >&2
                tail -30 "$TMP/pomed.log" >&2
        fi
        exit 1
}
pass() { echo "ok: $*"; }

require_root() { [[ $(id -u) -eq 0 ]] || skip "needs root (namespaces, cgroups, an unprivileged pod uid)"; }
# require_seal: skips unless pome doctor says this host can seal an agent (pome run's pod).
require_seal() {
        local seal
        seal=$("$POME" doctor 2>/dev/null | grep -E '^(ok|warn|missing) +agent seal' || true)
        [[ $seal == ok* ]] || skip "this host cannot seal an agent (pome doctor: ${seal:-no answer})"
}
for bin in "$POMED" "$POME" "$POD"; do
        [[ -x $bin ]] || skip "$bin is not built"
done
command -v jq >/dev/null || skip "jq is not installed"
command -v curl >/dev/null || skip "curl is not installed"

TMP=$(mktemp -d /tmp/pome-test.XXXXXX)
chmod 755 "$TMP"
POMED_PID=
declare -a EXTRA_PIDS=()

# Sanitizer reports make the test fail even when pomed exits 0.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

stop_pomed() {
        [[ -n $POMED_PID ]] || return 0
        local status=0
        kill -TERM "$POMED_PID" 2>/dev/null || true
        wait "$POMED_PID" || status=$?
        POMED_PID=
        if grep -qE "AddressSanitizer|LeakSanitizer|runtime error:" "$TMP/pomed.log"; then
                echo "--- sanitizer report in pomed.log" >&2
                grep -A30 -E "AddressSanitizer|LeakSanitizer|runtime error:" "$TMP/pomed.log" | head -60 >&2
                return 1
        fi
        if [[ $status -ne 0 ]]; then
                echo "pomed exited with status $status" >&2
                tail -20 "$TMP/pomed.log" >&2
                return 1
        fi
}

# cleanup [STATUS]: the EXIT trap (a test's own trap calls it last, with the status it saw:
# under set -e a trap's failing command ends the trap, so nothing there may fail)
cleanup() {
        local rc=${1:-$?}
        for p in "${EXTRA_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
        if ! stop_pomed; then
                rc=1
        fi
        [[ -n ${KEEP_TMP:-} ]] || rm -rf "$TMP"
        exit $rc
}
trap cleanup EXIT

# start_pomed [YAML lines…]: a pomed with the test defaults plus the given settings.
start_pomed() {
        mkdir -p "$TMP/state"
        {
                echo "control_listen: 127.0.0.1:0"
                echo "gateway_listen: 127.0.0.1:0"
                echo "state_dir: $TMP/state"
                echo "bus: none"
                for line in "$@"; do echo "$line"; done
        } >"$TMP/pomed.conf"
        rm -f "$TMP/state/pomed.json"
        "$POMED" --config "$TMP/pomed.conf" >>"$TMP/pomed.log" 2>&1 &
        POMED_PID=$!
        for _ in $(seq 1 200); do
                [[ -f $TMP/state/pomed.json ]] && break
                kill -0 "$POMED_PID" 2>/dev/null || fail "pomed exited during start-up"
                sleep 0.05
        done
        [[ -f $TMP/state/pomed.json ]] || fail "pomed did not start within 10 s"
        CONTROL=$(jq -r .control_url "$TMP/state/pomed.json")
        GATEWAY=$(jq -r .gateway_url "$TMP/state/pomed.json")
        API_KEY=$(head -1 "$TMP/state/api-key")
        export POME_API_URL=$CONTROL POME_API_KEY=$API_KEY POME_STATE_DIR=$TMP/state
}

# test_images_dir: $TMP/images, a copy of the shipped images with the test fixtures of
# tests/sandbox-images laid over it (seeds that fail to load on purpose, which are never
# shipped); for start_pomed "images_dir: $(test_images_dir)". Prints the path.
test_images_dir() {
        local d=$TMP/images
        if [[ ! -d $d ]]; then
                mkdir -p "$d"
                cp -r "$SRC/sandbox-images/." "$d/"
                cp -r "$SRC/tests/sandbox-images/." "$d/"
                rm -f "$d/README.md"
        fi
        echo "$d"
}

# api METHOD PATH [BODY]: a control API call; sets STATUS and BODY.
api() {
        local method=$1 path=$2 data=${3:-}
        local args=(-s -o "$TMP/body" -w '%{http_code}' -X "$method" -H "Authorization: Bearer $API_KEY")
        [[ -n $data ]] && args+=(-H 'Content-Type: application/json' --data-binary "$data")
        STATUS=$(curl "${args[@]}" "$CONTROL$path")
        BODY=$(cat "$TMP/body")
}

# twin_call METHOD URL TOKEN [BODY] [CONTENT-TYPE]: a gateway call; sets STATUS and BODY.
twin_call() {
        local method=$1 url=$2 token=$3 data=${4:-} ctype=${5:-application/json}
        local args=(-s -o "$TMP/body" -w '%{http_code}' -X "$method")
        [[ -n $token ]] && args+=(-H "Authorization: Bearer $token")
        [[ -n $data ]] && args+=(-H "Content-Type: $ctype" --data-binary "$data")
        STATUS=$(curl "${args[@]}" "$url")
        BODY=$(cat "$TMP/body")
}

# create_sandbox TWIN…: POST /v1/sandboxes; on 201 sets SID, TOKEN, and the create JSON in CREATED.
create_sandbox() {
        local twins
        twins=$(printf '%s\n' "$@" | jq -R . | jq -sc .)
        api POST /v1/sandboxes "{\"twins\":$twins}"
        [[ $STATUS == 201 ]] || fail "create $* answered $STATUS: $BODY"
        CREATED=$BODY
        SID=$(jq -r .session_id <<<"$BODY")
        TOKEN=$(jq -r .session_token <<<"$BODY")
}

rest_url() { jq -r ".per_twin.$1.rest_url" <<<"$CREATED"; }

# discard SID: stop an open sandbox, confirming the discard.
discard() {
        api DELETE "/v1/sandboxes/$1"
        if [[ $STATUS == 409 ]]; then
                local t
                t=$(jq -r .error.details.discard_token <<<"$BODY")
                api DELETE "/v1/sandboxes/$1?confirm_discard=$t"
        fi
        [[ $STATUS == 204 ]] || fail "discard $1 answered $STATUS: $BODY"
}

assert_eq() {
        [[ "$1" == "$2" ]] || fail "${3:-values differ}: expected '$2', got '$1'"
}
assert_status() {
        [[ $STATUS == "$1" ]] || fail "${2:-request}: expected HTTP $1, got $STATUS: $BODY"
}
assert_jq() { # assert_jq FILTER EXPECTED [MESSAGE] on BODY
        local got
        got=$(jq -r "$1" <<<"$BODY") || fail "${3:-$1}: body is not JSON: $BODY"
        [[ $got == "$2" ]] || fail "${3:-$1}: expected '$2', got '$got' in $BODY"
}

# require_cgroups_active: for a test of pods' cgroups, after start_pomed. Skips on a host
# with no memory controller at all; fails when the host has one and pomed runs without its
# cgroup layer (that is a bug, not this host's limit: a test would pass without it).
require_cgroups_active() {
        [[ -d /sys/fs/cgroup/memory ]] || grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null ||
                skip "no cgroup memory controller on this host"
        local h
        h=$(curl -s "$CONTROL/healthz")
        [[ $(jq -r .isolation.cgroups.active <<<"$h") == true ]] ||
                fail "pomed runs without its cgroup layer here (missing: $(jq -r .missing_layers <<<"$h")): $(grep -i cgroup "$TMP/pomed.log" | tail -3)"
}

# used: the team's sessions_used right now.
used() {
        api GET /v1/usage
        jq -r .sessions_used <<<"$BODY"
}

# raw_http PORT FORMAT [ARG…]: sends the bytes of `printf FORMAT ARG…` (so \r\n, \x00
# and %s work) over a new TCP connection to 127.0.0.1:PORT, half-closes nothing and
# reads until the server closes the connection (at most RAW_WAIT seconds, default 5).
# Sets RAW (the answer, NULs dropped), RAW_STATUS (status code of the first answer,
# empty when none), RAW_CLOSED (1 when the server closed the connection, 0 when it
# was still open at the deadline) and RAW_HEAD (the first answer's header block).
raw_http() {
        local port=$1 fd rc=0
        shift
        exec {fd}<>"/dev/tcp/127.0.0.1/$port"
        # The server may answer and close before it has read everything: no SIGPIPE.
        # shellcheck disable=SC2059 # the format is the request
        (trap '' PIPE && printf "$@" >&"$fd") 2>/dev/null || true
        timeout "${RAW_WAIT:-5}" cat <&"$fd" >"$TMP/raw" 2>/dev/null || rc=$?
        exec {fd}>&-
        RAW_CLOSED=1
        [[ $rc -ne 124 ]] || RAW_CLOSED=0
        RAW=$(tr -d '\0' <"$TMP/raw")
        RAW_STATUS=
        [[ $RAW =~ ^HTTP/1\.1\ ([0-9][0-9][0-9])\  ]] && RAW_STATUS=${BASH_REMATCH[1]}
        RAW_HEAD=${RAW%%$'\r\n\r\n'*}
}

# raw_body: the body of the first answer in RAW (after the header block).
raw_body() { printf '%s' "${RAW#*$'\r\n\r\n'}"; }

# pod_pid TWIN: the pid of TWIN's pod in sandbox $SID while it is open ("closed" otherwise).
pod_pid() {
        api GET "/v1/sandboxes/$SID"
        jq -r --arg t "$1" 'if .state == "ready" or .state == "running" then .per_twin[$t].pod.pid else "closed" end' <<<"$BODY"
}

# world_state URL FILE: the twin's /_pome/state at URL (its rest_url), sorted, into FILE.
world_state() { curl -s -H "Authorization: Bearer $TOKEN" "$1/_pome/state" | jq -S . >"$2"; }

# inline_body BODY: a file under $TMP holding BODY, named after its checksum (for messages).
inline_body() {
        local f
        f="$TMP/inline-$(printf '%s' "$1" | md5sum | cut -c1-8)"
        printf '%s' "$1" >"$f"
        echo "$f"
}
