#!/usr/bin/env bash
# The package on a Debian 12 root where systemd is not PID 1 (systemd-nspawn without
# --boot: a container or chroot as CI runners have): the install says pomed was not
# started and how to start it; the documented command starts it; a member of `pome` uses
# it with `pome` (the key is root:pome 0640); purge, with a pod still running as
# pome-pod, leaves no account and none of the package's files or directories.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) -eq 0 ]] || skip "needs root (systemd-nspawn)"
require_tools mmdebstrap:mmdebstrap systemd-nspawn:systemd-container dpkg-buildpackage:dpkg-dev
trap '[[ -n ${KEEP_ROOT:-} || -z ${ROOT:-} ]] || rm -rf "$ROOT"' EXIT

build_deb
# the root of tests/system/test-package.sh (its cached tarball), never booted here
make_root "systemd,systemd-sysv,dbus,curl,jq,procps,libcgroup2,libcurl4,libjansson4,libmicrohttpd12,libseccomp2,libsqlite3-0,libssl3,libyaml-0-2"
cp "$DEB" "$ROOT/root/pome.deb"
cat >"$ROOT/root/check.sh" <<'EOF'
#!/bin/sh
# runs inside the root, as its PID 1's child: no systemd, no network
set -u
fail() { echo "FAIL: $*"; exit 1; }
[ ! -d /run/systemd/system ] || fail "systemd looks booted in this root"
useradd --create-home --shell /bin/sh alice # before the snapshot: her account is not ours
find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp -o -path /root \
        -o -path /var/log -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg \) -prune -o -print |
        sort >/tmp/before.txt
DEBIAN_FRONTEND=noninteractive apt-get install -y -q /root/pome.deb >/tmp/install.log 2>&1 ||
        fail "apt-get install: $(tail -5 /tmp/install.log)"
grep -q "systemd is not running on this machine, so pomed was not started" /tmp/install.log ||
        fail "the install does not say pomed was not started: $(tail -8 /tmp/install.log)"
cmd=$(grep -A2 "^Start it as root" /tmp/install.log | sed -n 's/^    //p' | head -1)
[ -n "$cmd" ] || fail "the install does not say how to start pomed"
echo "ok: the install says pomed was not started, and how: $cmd"
sh -c "$cmd"
for i in $(seq 100); do [ -f /var/lib/pome/pomed.json ] && break; sleep 0.1; done
[ -f /var/lib/pome/pomed.json ] || fail "the documented command did not start pomed: $(tail -5 /var/log/pomed.log)"
key=$(stat -c '%U:%G %a' /var/lib/pome/api-key)
[ "$key" = "root:pome 640" ] || fail "the team key is $key, not root:pome 640 (the directory: $(stat -c "%U:%G %a" /var/lib/pome); $(getent group pome))"
usermod -aG pome alice
# this root's cgroups are read-only (no systemd, no delegation): a pod would have no limits,
# so creates are refused with the reason and the fix, until the operator opts in
out=$(runuser -u alice -- sh -c 'cd /tmp && pome sandbox create --twin github' 2>&1) &&
        fail "a create without cgroups succeeded: $out"
echo "$out" | grep -q "allow_unlimited_pods" || fail "the refusal does not give the fix: $out"
echo "ok: without cgroups a create is refused with the fix: $(echo "$out" | head -1 | cut -c1-100)…"
echo "allow_unlimited_pods: true" >/etc/pome/pomed.conf.d/40-container.conf
pkill -TERM -x pomed
for i in $(seq 100); do pgrep -x pomed >/dev/null || break; sleep 0.1; done
rm -f /var/lib/pome/pomed.json
sh -c "$cmd"
for i in $(seq 100); do [ -f /var/lib/pome/pomed.json ] && break; sleep 0.1; done
out=$(runuser -u alice -- sh -c 'cd /tmp && pome sandbox create --twin github --twin slack' 2>&1) ||
        fail "pome sandbox create as a member of pome: $out"
rm /etc/pome/pomed.conf.d/40-container.conf
echo "ok: the documented command starts pomed; with allow_unlimited_pods a member of pome creates a sandbox (key root:pome 0640)"
runuser -u alice -- sh -c 'cd /tmp && pome doctor' >/tmp/doctor.txt 2>&1 || true
grep -q "control API" /tmp/doctor.txt || fail "pome doctor: $(cat /tmp/doctor.txt)"
# pomed killed without a drain: its pods, running as pome-pod, may outlive it a moment;
# one started by hand here stays (as after a crash of its supervisor)
runuser -u pome-pod -- sleep 300 &
sleep 0.2
pkill -KILL -x pomed || true
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q pome >/tmp/purge.log 2>&1 ||
        fail "apt-get purge: $(tail -5 /tmp/purge.log)"
getent passwd pome-pod >/dev/null && fail "purge left the account pome-pod"
getent group pome >/dev/null && fail "purge left the group pome"
find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp -o -path /root \
        -o -path /var/log -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg \) -prune -o -print |
        sort >/tmp/after.txt
left=$(comm -13 /tmp/before.txt /tmp/after.txt | head -5)
[ -z "$left" ] || fail "purge left: $left"
echo "ok: purge (a pod running as pome-pod) leaves no account and no file"
EOF
chmod +x "$ROOT/root/check.sh"
out=$(systemd-nspawn -D "$ROOT" --quiet --register=no --keep-unit --private-network --as-pid2 \
        /root/check.sh 2>&1) || true
echo "$out" | grep '^ok: ' || true
grep -q '^FAIL: ' <<<"$out" && fail "$(grep '^FAIL: ' <<<"$out")"
[[ $(grep -c '^ok: ' <<<"$out") == 4 ]] || fail "the checks inside did not finish: $(tail -5 <<<"$out")"
pass "a Debian 12 root without systemd as PID 1: install, start by hand, use, purge"
