# Sourced by the GPU scripts that run on the device machine after
# `scripts/gpu-check.sh build` here: sets top (this tree), out (logs: $OUT, else
# out/gpu), the environment (NVLink multicast off, the carried libraries and data) and
# a (the GPU-only arsim in .devcarry/, or $ARSIM_BIN).
top=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$top/out/gpu}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH="$top/.devcarry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ARSIM_DATADIR="${ARSIM_DATADIR:-$top}"
a="${ARSIM_BIN:-$top/.devcarry/arsim}" # ARSIM_BIN: another build, to compare side by side
[ -x "$a" ] || { echo "no $a: run 'scripts/gpu-check.sh build' first"; exit 2; }
# A count of GPUs or ranks ($2), 1 or more; else one line naming the script ($1) and exit 2.
need_count() {
    case $2 in '' | *[!0-9]* | 0*) echo "$1: '$2' is no count of GPUs or ranks (1 or more)" >&2; exit 2 ;; esac
}
