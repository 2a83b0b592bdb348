# Helpers of the system tests: a Debian 12 root (mmdebstrap, cached in the build dir)
# booted with systemd as PID 1 in systemd-nspawn, and commands run inside it with
# nsenter. Sourced, not run.
set -euo pipefail

BUILD=${POME_BUILD_DIR:?POME_BUILD_DIR is set by ctest}
SRC=${POME_SOURCE_DIR:?POME_SOURCE_DIR is set by ctest}
WORK=$BUILD/system
LEADER=
NSPAWN_PID=
ROOT=

skip() {
        echo "skip: $*" >&2
        exit 77
}
fail() {
        echo "FAIL: $*" >&2
        if [[ -n $LEADER ]]; then
                echo "--- journal of pomed.service (last 40 entries)" >&2
                in_root journalctl -u pomed --no-pager -n 40 -o short-monotonic >&2 || true
        fi
        exit 1
}
pass() { echo "ok: $*"; }
# require_tools COMMAND:PACKAGE…: skips unless every command is installed
require_tools() {
        local tool
        for tool in "$@"; do
                command -v "${tool%%:*}" >/dev/null ||
                        skip "${tool%%:*} is not installed (Debian: ${tool#*:}; scripts/setup.sh installs it)"
        done
}
assert_eq() { [[ "$1" == "$2" ]] || fail "${3:-values differ}: expected '$2', got '$1'"; }

# in_root CMD…: CMD inside the booted root, as root, with a clean environment.
in_root() {
        nsenter -t "$LEADER" -a -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
                LANG=C.UTF-8 "$@"
}

# as_user USER CMD…: CMD inside, as USER with that user's groups, from /tmp.
as_user() {
        local user=$1
        shift
        in_root runuser -u "$user" -- env -i PATH=/usr/bin:/bin HOME=/tmp USER="$user" \
                LANG=C.UTF-8 sh -c 'cd /tmp && exec "$@"' sh "$@"
}

# make_root PACKAGES: a fresh root under $WORK from a cached mmdebstrap tarball of
# bookworm's minbase with PACKAGES (comma-separated); sets ROOT.
make_root() {
        local include=$1 key tarball
        key=$(printf '%s' "$include" | sha256sum | cut -c1-12)
        tarball=$WORK/bookworm-minbase-$key.tar
        mkdir -p "$WORK"
        if [[ ! -f $tarball ]]; then
                echo "system: mmdebstrap bookworm ($include) → $tarball (once; cached)"
                # roots of other lists stay (each test has its own); older ones of a list
                # that changed go after 7 days unused
                find "$WORK" -maxdepth 1 -name 'bookworm-minbase-*.tar' -atime +7 -delete
                rm -f "$WORK/partial-$key.tar"
                # mmdebstrap picks the output format from the name: keep .tar last
                mmdebstrap --quiet --variant=minbase --include="$include" bookworm \
                        "$WORK/partial-$key.tar" || fail "mmdebstrap could not make a bookworm root"
                mv "$WORK/partial-$key.tar" "$tarball"
        fi
        ROOT=$(mktemp -d "$WORK/root.XXXXXX")
        tar -C "$ROOT" -xf "$tarball"
}

# boot_root: systemd-nspawn --boot of $ROOT (no network of its own: nothing it starts
# is reachable from the host, nor clashes with the host's ports); waits until its systemd
# reports the boot finished. Sets LEADER (its PID 1, as seen from here).
boot_root() {
        systemd-nspawn -D "$ROOT" --boot --register=no --keep-unit --private-network \
                --quiet >"$WORK/console.log" 2>&1 &
        NSPAWN_PID=$!
        local state=
        for _ in $(seq 1 300); do
                if ! kill -0 "$NSPAWN_PID" 2>/dev/null; then
                        skip "systemd-nspawn cannot boot a container on this host: $(tail -5 "$WORK/console.log" | tr '\n' ' ')"
                fi
                LEADER=$(pgrep -P "$NSPAWN_PID" | head -1 || true)
                if [[ -n $LEADER ]]; then
                        state=$(in_root systemctl is-system-running 2>/dev/null || true)
                        [[ $state == running || $state == degraded ]] && break
                fi
                sleep 0.1
        done
        [[ $state == running || $state == degraded ]] ||
                fail "the container's systemd did not finish booting in 30 s (state '$state'): $(tail -5 "$WORK/console.log")"
        if [[ $state == degraded ]]; then
                echo "note: the container booted degraded: $(in_root systemctl --failed --no-legend --plain | tr '\n' ' ')"
        fi
}

# shutdown_root: powers the container off and removes its root.
shutdown_root() {
        if [[ -n $NSPAWN_PID ]] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
                in_root systemctl poweroff >/dev/null 2>&1 || kill -TERM "$NSPAWN_PID" 2>/dev/null || true
                for _ in $(seq 1 150); do
                        kill -0 "$NSPAWN_PID" 2>/dev/null || break
                        sleep 0.1
                done
                kill -KILL "$NSPAWN_PID" 2>/dev/null || true
                wait "$NSPAWN_PID" 2>/dev/null || true
        fi
        LEADER=
        [[ -z $ROOT || -n ${KEEP_ROOT:-} ]] || rm -rf "$ROOT"
}

# build_deb: the .deb of this tree in $WORK/deb (scripts/build-deb.sh), built once per
# content of the tree (tracked files and changes), shared by the tests that install it.
# Sets DEB.
build_deb() {
        local key
        key=$(cd "$SRC" && { git ls-files -s; git diff HEAD; git ls-files --others --exclude-standard |
                xargs -r sha256sum; } | sha256sum | cut -c1-16)
        if [[ ! -f $WORK/deb/.key || $(cat "$WORK/deb/.key") != "$key" ]]; then
                rm -rf "$WORK/deb"
                "$SRC/scripts/build-deb.sh" "$WORK/deb" >/dev/null || fail "the package does not build"
                echo "$key" >"$WORK/deb/.key"
        fi
        DEB=$(ls "$WORK"/deb/pome_*_*.deb | head -1)
}

# ---- a whole Debian 12 machine: QEMU (software emulation, TCG), cgroup v2, systemd as
# PID 1, its disk a raw ext4 image; its control API and gateway forwarded to ports here.

# vm_image IMAGE: $ROOT (make_root with a kernel, see VM_PACKAGES) as a bootable ext4
# image: the package installed, systemd-networkd for QEMU's user network, no password
# needed on the serial console. Sets VM_KERNEL, VM_INITRD.
VM_PACKAGES="linux-image-amd64,systemd,systemd-sysv,udev,dbus,curl,jq,procps,e2fsprogs,libcgroup2,libcurl4,libjansson4,libmicrohttpd12,libseccomp2,libsqlite3-0,libssl3,libyaml-0-2,iproute2"
vm_image() {
        local img=$1
        cp "$DEB" "$ROOT/root/"
        systemd-nspawn -D "$ROOT" --quiet --register=no --keep-unit --private-network \
                sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -q /root/$(basename "$DEB")" \
                >"$WORK/vm-install.log" 2>&1 || fail "installing the package in the VM's root failed: $(tail -5 "$WORK/vm-install.log")"
        printf '/dev/vda / ext4 defaults 0 1\n' >"$ROOT/etc/fstab"
        printf '[Match]\nName=en* eth*\n[Network]\nDHCP=yes\n' >"$ROOT/etc/systemd/network/10-qemu.network"
        ln -sf /lib/systemd/system/systemd-networkd.service \
                "$ROOT/etc/systemd/system/multi-user.target.wants/systemd-networkd.service"
        mkdir -p "$ROOT/etc/systemd/system/serial-getty@ttyS0.service.d"
        printf '[Service]\nExecStart=\nExecStart=-/sbin/agetty --autologin root --noclear %%I 115200 linux\n' \
                >"$ROOT/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf"
        VM_KERNEL=$(ls "$ROOT"/boot/vmlinuz-* | head -1)
        VM_INITRD=$(ls "$ROOT"/boot/initrd.img-* | head -1)
        [[ -f $VM_KERNEL && -f $VM_INITRD ]] || fail "the VM's root has no kernel or initrd"
        cp "$VM_KERNEL" "$WORK/vmlinuz"
        cp "$VM_INITRD" "$WORK/initrd.img"
        VM_KERNEL=$WORK/vmlinuz VM_INITRD=$WORK/initrd.img
        rm -f "$img"
        truncate -s 3G "$img"
        mke2fs -q -F -t ext4 -L root -d "$ROOT" "$img" || fail "mke2fs could not make the VM's disk"
}

# vm_boot IMAGE: boots it (2 vCPUs, TCG, 1.5 GiB) in the background, the guest's 7070 and
# 7071 on VM_CONTROL_PORT and VM_GATEWAY_PORT here; waits (up to 180 s) until its pomed's
# /healthz answers. Sets VM_PID, VM_CONTROL, VM_GATEWAY.
vm_boot() {
        local img=$1
        VM_CONTROL_PORT=${VM_CONTROL_PORT:-17070} VM_GATEWAY_PORT=${VM_GATEWAY_PORT:-17071}
        qemu-system-x86_64 -accel tcg -smp 2 -m 1536 -nographic -monitor none \
                -serial "file:$WORK/vm-console.log" -no-reboot \
                -kernel "$VM_KERNEL" -initrd "$VM_INITRD" \
                -append "root=/dev/vda rw console=ttyS0 systemd.unified_cgroup_hierarchy=1 quiet" \
                -drive "file=$img,format=raw,if=virtio,cache=writeback" \
                -nic "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:$VM_CONTROL_PORT-:7070,hostfwd=tcp:127.0.0.1:$VM_GATEWAY_PORT-:7071" \
                >"$WORK/vm-qemu.log" 2>&1 &
        VM_PID=$!
        VM_CONTROL=http://127.0.0.1:$VM_CONTROL_PORT VM_GATEWAY=http://127.0.0.1:$VM_GATEWAY_PORT
        for _ in $(seq 1 360); do
                kill -0 "$VM_PID" 2>/dev/null ||
                        fail "QEMU exited while booting: $(tail -5 "$WORK/vm-qemu.log") $(tail -5 "$WORK/vm-console.log")"
                curl -sf -m 2 "$VM_CONTROL/healthz" >/dev/null 2>&1 && return 0
                sleep 0.5
        done
        fail "the VM's pomed did not answer within 180 s: $(tail -20 "$WORK/vm-console.log")"
}

# vm_power_cut: kills QEMU at once (SIGKILL): what the guest had not written to its disk
# is gone, as in a power cut.
vm_power_cut() {
        [[ -n ${VM_PID:-} ]] || return 0
        kill -KILL "$VM_PID" 2>/dev/null || true
        wait "$VM_PID" 2>/dev/null || true
        VM_PID=
}
