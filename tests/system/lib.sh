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
                rm -rf "$WORK"/bookworm-minbase-*.tar "$WORK"/partial-*.tar # an older list's root
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
