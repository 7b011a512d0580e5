#!/bin/sh
# CI: `make install` gives an arsim that works on its own. Builds the distribution
# tarball's sources with a prefix in a temporary directory (the analytic backend: no
# SimGrid or CUDA needed), installs, deletes the sources and the build, then runs the
# installed arsim: shipped topologies, models and reference files must come from the
# prefix, and --data-dir / ARSIM_DATADIR must still override them.
#
# usage: scripts/check-install.sh        (env: JOBS, default the CPU count)
set -eu
srcdir=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
work=$(mktemp -d "${TMPDIR:-/tmp}/arsim-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "check-install: $*" >&2; exit 1; }

# The sources exactly as `make dist` ships them, from a copy of the tree (a tree
# configured in place cannot host a second configure).
mkdir "$work/src"
(cd "$srcdir" && git ls-files -z --cached --others --exclude-standard) |
    tar -C "$srcdir" --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$work/src" -xf -
cd "$work/src"
./autogen.sh >/dev/null 2>&1 || fail "autogen failed"
./configure -q --without-simgrid --without-cuda --prefix="$work/prefix" >"$work/configure.log" 2>&1 ||
    { tail -20 "$work/configure.log"; fail "configure failed"; }
make -s dist >/dev/null 2>&1 || fail "make dist failed"
mkdir "$work/build"
tar -C "$work/build" -xzf arsim-*.tar.gz
cd "$work/build"/arsim-*
./configure -q --without-simgrid --without-cuda --prefix="$work/prefix" >"$work/configure.log" 2>&1 ||
    { tail -20 "$work/configure.log"; fail "configure of the tarball failed"; }
make -s -j"$jobs" >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; fail "build of the tarball failed"; }
make -s install >"$work/install.log" 2>&1 || { tail -30 "$work/install.log"; fail "make install failed"; }
cd "$work"
rm -rf "$work/src" "$work/build"

arsim=$work/prefix/bin/arsim
data=$work/prefix/share/arsim
[ -x "$arsim" ] || fail "no $arsim"
man=$work/prefix/share/man/man1/arsim.1
[ -f "$man" ] || fail "no man page $man"
grep -q '^\.SH COMMAND: SWEEP' "$man" || fail "the man page lacks the sweep command"
for f in topologies/torus_2d_4x4.yaml topologies/h200_pair.yaml model/h200_sxm.yaml model/accel_tcm.yaml \
    validate/refs/nccl_h200_pair.csv validate/results/measured.csv; do
    [ -f "$data/$f" ] || fail "not installed: $data/$f"
done
unset ARSIM_DATADIR
"$arsim" list topologies | grep -q "($data/topologies)" || fail "list topologies does not name $data"
"$arsim" topo show h200_pair >/dev/null || fail "topo show h200_pair"
"$arsim" run --backend analytic --topology torus_2d_4x4 --size 1M --algo ring --csv - >"$work/run.csv" 2>"$work/run.err" ||
    fail "run on a shipped topology"
[ "$(wc -l <"$work/run.csv")" -ge 2 ] || fail "run wrote no row"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    "$arsim" plot "$work/run.csv" -o "$work/run.png" 2>"$work/plot.err" && [ -s "$work/run.png" ] ||
        fail "plot: $(cat "$work/plot.err")"
fi
"$arsim" validate --refs >"$work/validate.txt" 2>&1 || { cat "$work/validate.txt"; fail "validate on the shipped references"; }
"$arsim" model show h100_sxm >/dev/null || fail "model show h100_sxm"

# Overrides: a data directory of its own (the shipped models and one topology).
mkdir -p "$work/mydata/topologies" && cp -r "$data/model" "$work/mydata/"
sed 's/^name: .*/name: mine/' "$data/topologies/ring_1d_8.yaml" >"$work/mydata/topologies/mine.yaml"
grep -q '^name: mine' "$work/mydata/topologies/mine.yaml" || cp "$data/topologies/ring_1d_8.yaml" "$work/mydata/topologies/mine.yaml"
"$arsim" --data-dir "$work/mydata" topo show mine >/dev/null || fail "--data-dir DIR: topology not found there"
ARSIM_DATADIR=$work/mydata "$arsim" topo show mine >/dev/null || fail "ARSIM_DATADIR: topology not found there"
if "$arsim" topo show mine >/dev/null 2>&1; then fail "without an override, a topology of another directory was found"; fi
if "$arsim" --data-dir "$work/nowhere" list topologies 2>"$work/err.txt"; then fail "--data-dir of a missing directory accepted"; fi
grep -q "not a directory" "$work/err.txt" || fail "--data-dir of a missing directory: $(cat "$work/err.txt")"
echo "check-install: ok (installed arsim, its data under $data, works without its build tree)"
