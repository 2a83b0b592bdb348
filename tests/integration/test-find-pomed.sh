#!/usr/bin/env bash
# pome from anywhere: a pomed run by a systemd unit writes pomed.json to its
# RuntimeDirectory= ($RUNTIME_DIRECTORY; $XDG_RUNTIME_DIR/pome for a user unit), and pome
# run from another directory, with nothing in its environment, finds it and its key
# there; the file goes when pomed stops. From a subdirectory pome finds the .pome/ of a
# parent; a stopped pomed's state dir is said to be one, never swapped for another address.
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

# from a subdirectory: the nearest .pome/ of the working directory's parents, as git finds .git
mkdir -p "$TMP/proj/sub/deeper" "$TMP/empty-xdg"
ln -s "$TMP/state" "$TMP/proj/.pome"
inproj() { (cd "$TMP/proj/sub/deeper" && env -u POME_API_URL -u POME_API_KEY -u POME_STATE_DIR \
        XDG_RUNTIME_DIR="$TMP/empty-xdg" HOME="${PROJ_HOME:-$TMP}" "$POME" "$@"); }
out=$(inproj usage 2>&1) || fail "pome usage from a subdirectory of the pomed's directory: $out"
grep -q "team local" <<<"$out" || fail "pome usage from a subdirectory: $out"
out=$(inproj doctor 2>&1 || true)
grep -q "found via $TMP/proj/.pome/pomed.json" <<<"$out" || fail "doctor from a subdirectory: $out"
# not above $HOME's parent: with HOME=$TMP/proj/sub the search stops below $TMP/proj
out=$(PROJ_HOME=$TMP/proj/sub inproj usage 2>&1) && fail "the search went above \$HOME's parent: $out"
grep -q "team local" <<<"$out" && fail "the search went above \$HOME's parent: $out"
pass "pome from a subdirectory finds the nearest .pome/ of its parents, and not above \$HOME's parent"

stop_pomed
[[ ! -e $TMP/xdg/pome/pomed.json ]] || fail "pomed.json left in the runtime directory after a clean stop"
pass "a clean stop removes the runtime directory's pomed.json"

# a stopped pomed's state dir (its key, no pomed.json): said, exit 1, never another address
[[ -f $TMP/state/api-key && ! -e $TMP/state/pomed.json ]] || fail "the stopped pomed's state dir is not as expected"
set +e
out=$(cd "$TMP/elsewhere" && env -u POME_API_URL -u POME_API_KEY POME_STATE_DIR="$TMP/state" \
        XDG_RUNTIME_DIR="$TMP/empty-xdg" "$POME" sandbox list 2>&1)
rc=$?
set -e
assert_eq "$rc" 1 "exit status against a stopped pomed's state dir"
grep -q "pomed is not running in $TMP/state: it holds an API key but no pomed.json" <<<"$out" ||
        fail "pome does not say pomed is stopped: $out"
grep -q "Start it: pomed --state-dir $TMP/state" <<<"$out" || fail "pome does not say how to start it: $out"
grep -q "127.0.0.1:7070\|not valid" <<<"$out" && fail "pome fell back to the default address: $out"
set +e
out=$(inproj usage 2>&1)
rc=$?
set -e
assert_eq "$rc" 1 "exit status from a subdirectory of a stopped pomed's directory"
grep -q "pomed is not running in $TMP/proj/.pome" <<<"$out" || fail "from the subdirectory: $out"
out=$(inproj doctor 2>&1 || true)
grep -q "missing.*control API.*pomed is not running in $TMP/proj/.pome" <<<"$out" || fail "doctor of a stopped pomed: $out"
grep -q "seccomp" <<<"$out" || fail "doctor stopped checking the host: $out"
out=$(cd "$TMP/elsewhere" && POME_API_URL=http://127.0.0.1:9 POME_STATE_DIR="$TMP/state" "$POME" usage 2>&1) &&
        fail "usage succeeded against nothing"
grep -q "127.0.0.1:9" <<<"$out" || fail "an explicit POME_API_URL is still honoured: $out"
pass "a stopped pomed's state dir: 'pomed is not running there', exit 1, no fallback; doctor still checks the host"
