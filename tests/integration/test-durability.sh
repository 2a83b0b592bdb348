#!/usr/bin/env bash
# durability: a twin write is answered only once its tape row is written (both levels);
# with durability: full the row is also synced: the write of the row is followed by an
# fdatasync(2) of the tape, before the reply is sent. With normal (the default), none is.
# Seen from outside with strace on a real pomed.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
command -v strace >/dev/null || skip "strace is not installed (scripts/setup.sh installs it)"

# syncs_of LEVEL: starts pomed with durability LEVEL, makes one GitHub write under strace;
# sets SYNCS to the fdatasync calls made between the row's write and the reply's send
syncs_of() {
        start_pomed "durability: $1"
        create_sandbox github
        local url
        url=$(rest_url github)
        strace -f -qq -e trace=write,fdatasync,sendmsg,sendto,writev -o "$TMP/strace.$1" -p "$POMED_PID" &
        local tracer=$!
        sleep 0.5
        twin_call POST "$url/repos/acme/api/issues/1/comments" "$TOKEN" '{"body":"durable"}'
        assert_status 201 "a write with durability: $1"
        sleep 0.3
        kill "$tracer"
        wait "$tracer" 2>/dev/null || true
        stop_pomed
        # the tape row's write (a TwinHttpEvent line), then what follows before the reply
        SYNCS=$(awk '/write\(.*TwinHttpEvent/ {row = 1} row && /fdatasync/ {n++} row && /HTTP\/1.1 201/ {print n + 0; exit}' \
                "$TMP/strace.$1")
}
syncs_of full
full=$SYNCS
syncs_of normal
normal=$SYNCS
[[ -n $full && -n $normal ]] || fail "no tape row write followed by the reply was seen (full '$full', normal '$normal')"
((full >= 1)) || fail "durability: full: no fdatasync between the tape row and the reply"
assert_eq "$normal" 0 "durability: normal: fdatasync calls between the row and the reply"
pass "durability: full syncs the tape row before the reply ($full fdatasync); normal does not"
