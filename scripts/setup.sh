#!/bin/sh
# Set up a fresh Debian (bookworm) or Ubuntu machine and build arsim in this
# source tree: install the Debian packages arsim needs (apt-get update first),
# then autogen + configure + make. Safe to run again: packages already there
# are not reinstalled, and configure runs only when the build is not set up.
#
# usage: scripts/setup.sh [configure options...]
#        e.g. scripts/setup.sh --without-simgrid      (GPU-only build)
# env:   JOBS (default: the CPU count), ARSIM_NO_APT=1 (skip the package step)
set -eu
cd "$(dirname "$0")/.."

packages="build-essential autoconf automake libtool pkg-config libyaml-dev check \
libsimgrid-dev python3-matplotlib"
# Hardening (docs/HARDENING.md): clang for `make fuzz` (libFuzzer), valgrind for
# scripts/valgrind-study.sh. Neither is needed to build or for `make check`.
packages="$packages clang valgrind"
# GNU parallel runs examples/shards-parallel.sh (tests/shards.sh runs it where present).
packages="$packages parallel"

missing=
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done

if [ -n "${ARSIM_NO_APT:-}" ]; then
    echo "setup: skipping apt-get (ARSIM_NO_APT set)"
elif [ -z "$missing" ]; then
    echo "setup: all Debian packages present:" $packages
else
    if [ "$(id -u)" -eq 0 ]; then
        sudo=
    elif command -v sudo >/dev/null 2>&1; then
        sudo="sudo"
    else
        echo "setup: need root (or sudo) to install:$missing" >&2
        exit 1
    fi
    echo "setup: installing:$missing"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages
fi

# The build system: configure is generated, not committed.
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
    ./autogen.sh
fi
# Configure when there is no build here yet, or when options were given.
if [ ! -f Makefile ] || [ ! -f config.status ] || [ $# -gt 0 ]; then
    ./configure "$@"
fi
make -j"${JOBS:-$(nproc 2>/dev/null || echo 2)}"
echo "setup: built ./arsim (run ./arsim for the default study, make check for the tests)"
