#!/usr/bin/env bash
# cgroup v2 under a real systemd, on a whole Debian 12 machine: the package installed in a
# QEMU VM (software emulation, systemd as PID 1, cgroup v2 only), where
# tests/system/vm-cgroups-checks.sh starts pomed (a) by the packaged unit, (b) by
# systemd-run without Delegate=, (c) 20 times from a login-like scope in the background of
# a shell that keeps forking, (d) from a CI runner's service. Each time every pod must get
# its memory and pids limits (read in the guest's /sys/fs/cgroup), pomed must not lose its
# cgroup layer, and no process of its caller may move. Then the package's checks there
# (systemd-analyze, the watchdog, pome doctor, systemctl reload returning once applied,
# restart, a member of pome using it, another user told to join, the system bus's policy,
# the journal's fields, /metrics = the usage = D-Bus, an upgrade keeping pomed.conf, stop,
# purge) and the cgroup tests of this tree (test-isolation,
# test-all-or-nothing, test-pool, test-restart-cgroup through the installed binaries;
# unit/test-cgroup of the release build). The guest powers itself off; its report is read
# from its disk (debugfs) and printed.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) -eq 0 ]] || skip "needs root (systemd-nspawn installs the package into the VM's root)"
require_tools mmdebstrap:mmdebstrap systemd-nspawn:systemd-container dpkg-buildpackage:dpkg-dev \
        qemu-system-x86_64:qemu-system-x86 mke2fs:e2fsprogs debugfs:e2fsprogs jq:jq

IMG=$WORK/vm-cgroups.img
trap 'vm_power_cut; [[ -n ${KEEP_ROOT:-} ]] || rm -rf "$ROOT" "$IMG"' EXIT

build_deb
make_root "$VM_PACKAGES"
install -m 0755 "$SRC/tests/system/vm-cgroups-checks.sh" "$ROOT/root/vm-cgroups-checks.sh"
# the cgroup tests of this tree, run inside through the installed binaries
mkdir -p "$ROOT/root/src/tests"
cp -r "$SRC/tests/integration" "$SRC/tests/sandbox-images" "$ROOT/root/src/tests/"
cp -r "$SRC/sandbox-images" "$SRC/policies" "$SRC/examples" "$ROOT/root/src/"
# unit/test-cgroup of the release build (the dev one needs ASan's runtime), when there is one
if [[ -x $SRC/build/release/tests/test-cgroup ]]; then
        cp "$SRC/build/release/tests/test-cgroup" "$ROOT/root/src/test-cgroup"
else
        echo "note: no build/release/tests/test-cgroup: unit/test-cgroup is not run in the VM"
fi
cat >"$ROOT/etc/systemd/system/pome-vm-checks.service" <<EOF
[Unit]
Description=pome VM checks: cgroups of pomed started four ways
After=pomed.service network.target
Wants=pomed.service

[Service]
Type=oneshot
ExecStart=/bin/bash /root/vm-cgroups-checks.sh
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/pome-vm-checks.service \
        "$ROOT/etc/systemd/system/multi-user.target.wants/pome-vm-checks.service"
# the same package as a later version, for the upgrade inside
rm -rf "$WORK/vm-next" && dpkg-deb -R "$DEB" "$WORK/vm-next"
sed -i "s/^Version: .*/Version: $(dpkg-deb -f "$DEB" Version)+vmtest1/" "$WORK/vm-next/DEBIAN/control"
dpkg-deb -b -Zgzip "$WORK/vm-next" "$ROOT/root/pome_next.deb" >/dev/null
rm -rf "$WORK/vm-next"
vm_image "$IMG"

# boot; the guest powers off when its checks are done (QEMU exits: -no-reboot)
VM_CONTROL_PORT=${VM_CONTROL_PORT:-17170} VM_GATEWAY_PORT=${VM_GATEWAY_PORT:-17171}
start=$(date +%s)
qemu-system-x86_64 -accel tcg -smp 2 -m 1536 -nographic -monitor none \
        -serial "file:$WORK/vm-cgroups-console.log" -no-reboot \
        -kernel "$VM_KERNEL" -initrd "$VM_INITRD" \
        -append "root=/dev/vda rw console=ttyS0 systemd.unified_cgroup_hierarchy=1 quiet" \
        -drive "file=$IMG,format=raw,if=virtio,cache=writeback" \
        -nic "user,model=virtio-net-pci" >"$WORK/vm-cgroups-qemu.log" 2>&1 &
VM_PID=$!
for _ in $(seq 1 2000); do
        kill -0 "$VM_PID" 2>/dev/null || break
        sleep 0.5
done
if kill -0 "$VM_PID" 2>/dev/null; then
        fail "the VM's checks did not finish within 1000 s: $(tail -20 "$WORK/vm-cgroups-console.log")"
fi
wait "$VM_PID" || true
VM_PID=
echo "the VM booted, ran its checks and powered off in $(($(date +%s) - start)) s"

debugfs -R "cat /root/vm-cgroups.out" "$IMG" 2>/dev/null >"$WORK/vm-cgroups.out" || true
cat "$WORK/vm-cgroups.out"
grep -qx DONE "$WORK/vm-cgroups.out" ||
        fail "the checks did not finish: $(tail -20 "$WORK/vm-cgroups-console.log")"
grep '^FAIL' "$WORK/vm-cgroups.out" && fail "$(grep -c '^FAIL' "$WORK/vm-cgroups.out") check(s) failed in the VM"
for label in a-unit b-systemd-run d-runner $(printf 'c%d ' $(seq 20)); do
        grep -q "^ok $label: .*memory.max [0-9]" "$WORK/vm-cgroups.out" ||
                fail "$label: no pod with its memory and pids limits"
done
assert_eq "$(grep -c '^ok c[0-9]*: the shell and its loop stay' "$WORK/vm-cgroups.out")" 20 \
        "starts from a busy shell that left the caller where it was"
for check in "package analyze" "package watchdog" "package upgrade" \
        "package doctor" "package reload" "package restart" "package stop" "package alice" \
        "package bob" "package bus" "package journal" "package metrics" "package purge" \
        "itest test-isolation" "itest test-all-or-nothing" "itest test-pool" "itest test-restart-cgroup"; do
        grep -q "^ok $check" "$WORK/vm-cgroups.out" || fail "$check: not ok in the VM"
done
if [[ -x $SRC/build/release/tests/test-cgroup ]]; then
        grep -q "^ok unit test-cgroup" "$WORK/vm-cgroups.out" || fail "unit/test-cgroup: not ok in the VM"
fi
pass "cgroup v2 under systemd: the unit, systemd-run without Delegate=, 20 starts from a busy shell and a CI runner's service each give every pod its memory and pids limits; no caller's process moved; the package's checks and the cgroup tests pass there"
