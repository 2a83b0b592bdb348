#!/usr/bin/env bash
# pome from anywhere: a pomed run by a systemd unit writes pomed.json to its
# RuntimeDirectory= ($RUNTIME_DIRECTORY; $XDG_RUNTIME_DIR/pome for a user unit), and pome
# run from another directory, with nothing in its environment, finds it and its key
# there; the file goes when pomed stops.
source "$(dirname "$0")/lib.sh"

mkdir -p "$TMP/xdg/pome" "$TMP/elsewhere"
chmod 755 "$TMP/xdg" # pomed here is root and its pods nobody: they must reach the notify socket
REAL=$POMED
printf '#!/bin/sh\nRUNTIME_DIRECTORY=%s exec "%s" "$@"\n' "$TMP/xdg/pome" "$REAL" >"$TMP/pomed-unit"
chmod +x "$TMP/pomed-unit"
POMED=$TMP/pomed-unit
start_pomed
POMED=$REAL
[[ -f $TMP/xdg/pome/pomed.json ]] || fail "no pomed.json in the runtime directory"
assert_eq "$(jq -r .state_dir "$TMP/xdg/pome/pomed.json")" "$(realpath "$TMP/state")" "state_dir in it"

bare() { (cd "$TMP/elsewhere" && env -u POME_API_URL -u POME_API_KEY -u POME_STATE_DIR \
        XDG_RUNTIME_DIR="$TMP/xdg" "$POME" "$@"); }
out=$(bare usage) || fail "pome usage from another directory: $out"
grep -q "team local" <<<"$out" || fail "pome usage: $out"
out=$(bare doctor 2>&1 || true)
grep -q "found via $TMP/xdg/pome/pomed.json" <<<"$out" || fail "doctor does not say where it found pomed: $out"
pass "pome from another directory finds the user pomed through \$XDG_RUNTIME_DIR/pome/pomed.json"

# the environment still wins
out=$(cd "$TMP/elsewhere" && POME_API_URL=http://127.0.0.1:9 XDG_RUNTIME_DIR="$TMP/xdg" \
        "$POME" usage 2>&1) && fail "POME_API_URL was not honoured"
grep -q "127.0.0.1:9" <<<"$out" || fail "the error does not name POME_API_URL's address: $out"
out=$(cd "$TMP/elsewhere" && POME_API_KEY=pome_notakey0000000000000000 XDG_RUNTIME_DIR="$TMP/xdg" \
        "$POME" usage 2>&1) && fail "POME_API_KEY was not honoured"
grep -q "invalid_auth" <<<"$out" || fail "a wrong POME_API_KEY: $out"
pass "POME_API_URL and POME_API_KEY still win over what pomed.json says"

stop_pomed
[[ ! -e $TMP/xdg/pome/pomed.json ]] || fail "pomed.json left in the runtime directory after a clean stop"
pass "a clean stop removes the runtime directory's pomed.json"
