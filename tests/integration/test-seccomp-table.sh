#!/usr/bin/env bash
# The seccomp table (issue 6, finding 11), proven from inside a real sandbox: a real
# pomed runs the probe (tests/helpers/pome-test-pod.c, static and unsanitized like
# pome-pod, with pome-pod's SIGSYS reporter) in place of pome-pod, under the real
# policies. Stage 1: the seed names the case, the probe runs it before READY=1, and the
# create answers 503 naming seccomp_violation:<syscall> — or the probe lives and reports
# the errno it saw. Stage 2: a call to /probe/<case> runs it after READY=1, and the
# sandbox fails pod_exited:slack:seccomp_violation:<syscall> — or the call answers the
# errno. One table below says what each case must do at each stage.
source "$(dirname "$0")/lib.sh"
require_root
PROBE=$BUILD/tests/pome-test-pod
[[ -x $PROBE ]] || skip "$PROBE is not built (it needs a static libjansson.a)"

# case  stage-1 expectation  stage-2 expectation  (kill:<syscall name> or an errno number)
TABLE="
mount                kill:mount              kill:mount
umount2              kill:umount2            kill:umount2
pivot_root           kill:pivot_root         kill:pivot_root
chroot               kill:chroot             kill:chroot
fsopen               kill:fsopen             kill:fsopen
fsconfig             kill:fsconfig           kill:fsconfig
fsmount              kill:fsmount            kill:fsmount
fspick               kill:fspick             kill:fspick
move_mount           kill:move_mount         kill:move_mount
open_tree            kill:open_tree          kill:open_tree
mount_setattr        kill:mount_setattr      kill:mount_setattr
bpf                  kill:bpf                kill:bpf
io_uring_setup       kill:io_uring_setup     kill:io_uring_setup
io_uring_enter       kill:io_uring_enter     kill:io_uring_enter
io_uring_register    kill:io_uring_register  kill:io_uring_register
userfaultfd          kill:userfaultfd        kill:userfaultfd
perf_event_open      kill:perf_event_open    kill:perf_event_open
keyctl               kill:keyctl             kill:keyctl
add_key              kill:add_key            kill:add_key
request_key          kill:request_key        kill:request_key
unshare              kill:unshare            kill:unshare
setns                kill:setns              kill:setns
clone_newuser        kill:clone              kill:clone
clone_newnet         kill:clone              kill:clone
clone_newns          kill:clone              kill:clone
clone_plain          38                      38
clone3               38                      38
socket_inet          kill:socket             kill:socket
socket_inet6         kill:socket             kill:socket
socket_netlink       kill:socket             kill:socket
socket_unix          0                       kill:socket
socket_unix_hibits   0                       kill:socket
socketpair           38                      kill:socketpair
ptrace               kill:ptrace             kill:ptrace
process_vm_readv     kill:process_vm_readv   kill:process_vm_readv
process_vm_writev    kill:process_vm_writev  kill:process_vm_writev
kexec_load           kill:kexec_load         kill:kexec_load
kexec_file_load      kill:kexec_file_load    kill:kexec_file_load
init_module          kill:init_module        kill:init_module
finit_module         kill:finit_module       kill:finit_module
delete_module        kill:delete_module      kill:delete_module
swapon               kill:swapon             kill:swapon
swapoff              kill:swapoff            kill:swapoff
reboot               kill:reboot             kill:reboot
acct                 kill:acct               kill:acct
iopl                 kill:iopl               kill:iopl
ioperm               kill:ioperm             kill:ioperm
quotactl             kill:quotactl           kill:quotactl
settimeofday         kill:settimeofday       kill:settimeofday
clock_settime        kill:clock_settime      kill:clock_settime
clock_adjtime        kill:clock_adjtime      kill:clock_adjtime
adjtimex             kill:adjtimex           kill:adjtimex
pidfd_getfd          kill:pidfd_getfd        kill:pidfd_getfd
kcmp                 kill:kcmp               kill:kcmp
open_by_handle_at    kill:open_by_handle_at  kill:open_by_handle_at
name_to_handle_at    kill:name_to_handle_at  kill:name_to_handle_at
execve               14                      kill:execve
execveat             14                      kill:execveat
rt_sigaction_sigsys  0                       kill:rt_sigaction
rt_sigaction_sigsys_hibits 0                 kill:rt_sigaction
rt_sigaction_sigusr1 0                       38
openat               38                      38
getpid               0                       0
"

mkdir -p "$TMP/images"
cp -r "$SRC/sandbox-images/." "$TMP/images/"
while read -r name _ _; do
        [[ -n $name ]] || continue
        echo "{\"probe_stage1\":\"$name\"}" >"$TMP/images/slack/seeds/s1-${name//_/-}.json"
done <<<"$TABLE"
start_pomed "images_dir: $TMP/images" "pod_exec: $PROBE"

# stage1 CASE EXPECT
stage1() {
        local name=$1 want=$2 seed=s1-${1//_/-}
        api POST /v1/sandboxes "{\"twins\":[\"slack\"],\"seeds\":{\"slack\":\"$seed\"}}"
        if [[ $want == kill:* ]]; then
                [[ $STATUS == 503 ]] || fail "stage 1 $name: expected a refused create (503), got $STATUS: $BODY"
                assert_jq .error.details.reason "seccomp_violation:${want#kill:}" "stage 1 $name"
                assert_jq .error.details.twin slack "stage 1 $name"
        else
                [[ $STATUS == 201 ]] || fail "stage 1 $name: expected the probe to live, got $STATUS: $BODY"
                local sid token url
                sid=$(jq -r .session_id <<<"$BODY")
                token=$(jq -r .session_token <<<"$BODY")
                url=$(jq -r .per_twin.slack.rest_url <<<"$BODY")
                twin_call GET "$url/probe/stage1" "$token"
                assert_status 200 "stage 1 $name: result"
                assert_jq .errno "$want" "stage 1 $name: errno"
                discard "$sid"
        fi
}

# stage2 CASE EXPECT: one sandbox per case (a kill ends it).
stage2() {
        local name=$1 want=$2
        create_sandbox slack
        local url
        url=$(rest_url slack)
        twin_call POST "$url/probe/$name" "$TOKEN"
        if [[ $want == kill:* ]]; then
                [[ $STATUS -ge 500 ]] || fail "stage 2 $name: expected the pod to die, the call answered $STATUS: $BODY"
                local reason=
                for _ in $(seq 1 40); do
                        api GET "/v1/sandboxes/$SID"
                        reason=$(jq -r '.reason // empty' <<<"$BODY")
                        [[ -n $reason ]] && break
                        sleep 0.05
                done
                assert_jq .state failed "stage 2 $name: sandbox state"
                assert_eq "$reason" "pod_exited:slack:seccomp_violation:${want#kill:}" "stage 2 $name: reason"
                assert_jq .per_twin.slack.pod.state "seccomp_violation:${want#kill:}" "stage 2 $name: pod state"
        else
                assert_status 200 "stage 2 $name"
                assert_jq .errno "$want" "stage 2 $name: errno"
                discard "$SID"
        fi
}

n=0
while read -r name s1 s2; do
        [[ -n $name ]] || continue
        stage1 "$name" "$s1"
        stage2 "$name" "$s2"
        n=$((n + 1))
done <<<"$TABLE"
pass "$n syscalls, stage 1 and stage 2, each with its expected action"

# The log names the syscall too, once per pod death.
grep -q "seccomp_violation:ptrace" "$TMP/pomed.log" || fail "no log line names seccomp_violation:ptrace"
pass "pomed logs the violations by name"
