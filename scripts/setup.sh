#!/usr/bin/env bash
# Installs what Pome needs on Debian 12 (as root; packages only when missing) and
# builds one preset: scripts/setup.sh [dev|release]  (default: release).
set -euo pipefail
# --help: the comment above, as usage
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
        awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
        exit 0
fi
if [[ -n ${1:-} && $1 != dev && $1 != release ]]; then
        echo "setup.sh: unknown preset '$1' (usage: scripts/setup.sh [dev|release]; --help)" >&2
        exit 2
fi
cd "$(dirname "$0")/.."
preset=${1:-release}

packages=(
        build-essential cmake pkg-config clang clang-format
        libmicrohttpd-dev libsystemd-dev libjansson-dev libcgroup-dev libseccomp-dev
        libcurl4-openssl-dev libssl-dev libsqlite3-dev libyaml-dev
        dbus-daemon dbus-bin systemd curl jq util-linux passwd procps iproute2 wrk
        # durability: full is checked by the syscalls it makes
        strace
        # the sealed agent's tests: agents in python3, a model server behind openssl
        python3 openssl
        # clients the twins are tested against: the GitHub CLI (REST and GraphQL), PyGithub,
        # stripe-python (Debian's python3, /usr/bin/python3), octokit.rb, slack-go (built with
        # Debian's Go from its GOPATH sources)
        gh python3-github python3-stripe ruby-octokit golang-go golang-github-slack-go-slack-dev
        # the Debian package and tests/system (a Debian 12 root booted in systemd-nspawn;
        # promtool checks /metrics; a whole Debian 12 VM under QEMU's emulation, its disk
        # an ext4 image)
        debhelper dpkg-dev scdoc lintian cpio mmdebstrap systemd-container prometheus
        qemu-system-x86 e2fsprogs
        # a fleet (pomed.conf fleet:, tests/system/test-fleet.sh): etcd and etcdctl, HAProxy in
        # front (packaging/haproxy)
        etcd-server etcd-client haproxy
        # the dashboard's browser test (tests/ui): Debian's chromium for puppeteer-core, and a
        # font for its screenshots
        chromium fonts-dejavu-core
)
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
        if [[ $(id -u) -ne 0 ]]; then
                echo "setup: missing Debian packages: ${missing[*]} (run as root to install them)" >&2
                exit 1
        fi
        echo "setup: installing ${#missing[@]} Debian packages (once; a minute or two): ${missing[*]}" >&2
        export DEBIAN_FRONTEND=noninteractive
        echo "setup: apt-get update" >&2
        apt-get update -qq
        # one line per package as it is set up: progress, not a silent minute; apt's own
        # words when it fails
        aptlog=$(mktemp)
        apt-get install -y -q --no-install-recommends "${missing[@]}" 2>&1 | tee "$aptlog" |
                sed -n 's/^Setting up \([^ ]*\) .*/setup:   installed \1/p' >&2
        ((PIPESTATUS[0] == 0)) || {
                tail -20 "$aptlog" | sed 's/^/apt-get: /' >&2
                echo "setup: apt-get install failed (its last lines above); to retry by hand:" >&2
                echo "  apt-get install --no-install-recommends ${missing[*]}" >&2
                rm -f "$aptlog"
                exit 1
        }
        rm -f "$aptlog"
fi

# a clone moved or copied elsewhere: its build directory names the old place (CMake
# refuses it); it is made again here
cache=build/$preset/CMakeCache.txt
if [[ -f $cache ]]; then
        home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
        if [[ -n $home && $home != "$PWD" ]]; then
                echo "setup: build/$preset was configured in $home (a moved or copied clone): made again here" >&2
                rm -rf "build/$preset"
        fi
fi
cmake --preset "$preset" >/dev/null
# The build's own progress ("[ 42%] Building C object …"), shown only when there is
# something to build; a tree that is up to date says so in one line.
echo "setup: building build/$preset (the first build takes a minute or so on 2 cores)" >&2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake --build --preset "$preset" -j"$(nproc)" >"$log" 2>&1; then
        cat "$log" >&2
        echo "setup: the build failed" >&2
        exit 1
fi
grep -E '^\[ *[0-9]+%\] (Building|Linking)' "$log" | sed 's/^/setup:   /' >&2 || true
grep -qE '^\[ *[0-9]+%\] (Building|Linking)' "$log" || echo "setup: build/$preset is up to date" >&2
