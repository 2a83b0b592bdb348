#!/usr/bin/env bash
# Installs what Pome needs on Debian 12 (as root; packages only when missing) and
# builds one preset: scripts/setup.sh [dev|release]  (default: release).
set -euo pipefail
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
        # one line per package as it is set up: progress, not a silent minute
        apt-get install -y -q --no-install-recommends "${missing[@]}" 2>&1 |
                sed -n 's/^Setting up \([^ ]*\) .*/setup:   installed \1/p' >&2
        ((PIPESTATUS[0] == 0)) || {
                echo "setup: apt-get install failed; run it by hand to see why:" >&2
                echo "  apt-get install --no-install-recommends ${missing[*]}" >&2
                exit 1
        }
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
