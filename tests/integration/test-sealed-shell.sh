#!/usr/bin/env bash
# `pome run TASK.md --shell` (issue 24): a shell in the agent's pod, to see what the agent
# sees. Driven through a real pty (script(1)): the shell runs sealed (its own uid, its
# controlling terminal the pty, the team key masked), with the sandbox's variables rewritten
# for the pod, reaches its twin by the vendor's name; when it exits, the sandbox is
# discarded ungraded and no run directory is left. Misuse is a usage error.
source "$POME_SOURCE_DIR/tests/integration/lib.sh"
require_root
command -v script >/dev/null || skip "script(1) (util-linux) is needed for a pty"
require_seal
start_pomed
cd "$TMP"
sed 's/^timeout: 60$/timeout: 2/; /^- \[model\]/d' "$SRC/examples/triage/task.md" >task.md
mkdir -p .pome && echo "sekrit-team-key" >.pome/api-key

# what the user types, once the shell is up (the timeout of 2 s does not apply to a shell);
# its stdin stays open until the shell has ended (script(1) ends with it)
type_in() {
        sleep 3
        echo 'echo "uid=$(id -u) pid=$$ tty=$(test -t 0 && echo yes)"'
        echo 'cat .pome/api-key 2>/dev/null || echo key-denied'
        echo 'curl -s -o /dev/null -w "github=%{http_code}\n" -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/repos/acme/api/issues/1'
        echo 'exit 3'
        sleep 30
}
SHELL=/bin/bash timeout 60 script -qec "$POME run task.md --shell --out runs" /dev/null \
        < <(type_in 2>/dev/null) >shell.out 2>&1 || true
tr -d '\r' <shell.out | sed 's/\x1b\[[?0-9;]*[a-zA-Z]//g' >shell.txt
grep -q '^uid=3[0-9]* pid=2 tty=yes' shell.txt || fail "the shell's identity: $(cat shell.txt)"
grep -qx 'key-denied' shell.txt || fail "the shell read the team key: $(cat shell.txt)"
grep -qx 'github=200' shell.txt || fail "the shell did not reach its twin by name: $(cat shell.txt)"
grep -q 'The shell ended; the sandbox was discarded, ungraded.' shell.txt || fail "the end is not said: $(cat shell.txt)"
grep -q 'agent exited with status 3' shell.txt || fail "the shell's status: $(cat shell.txt)"
[[ ! -e runs ]] || [[ -z $(ls runs) ]] || fail "--shell left a run directory: $(ls runs)"
assert_eq "$(used)" 0 "sandboxes open after the shell"
pass "--shell: a sealed shell on a pty (pid 2, its own uid, the key masked), its twin by name; sandbox discarded, nothing left"

set +e
"$POME" run task.md --shell -- ./agent.sh >/dev/null 2>misuse.err
rc1=$?
"$POME" run task.md --shell </dev/null >/dev/null 2>notty.err
rc2=$?
set -e
assert_eq "$rc1 $rc2" "2 2" "exit statuses of --shell with a command and without a terminal"
grep -q 'drop the command after --' misuse.err || fail "misuse: $(cat misuse.err)"
grep -q 'needs a terminal' notty.err || fail "no terminal: $(cat notty.err)"
pass "--shell with a command, or without a terminal: usage errors"
