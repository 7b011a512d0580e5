#!/bin/sh
# The man page arsim(1), made from the help the binary itself prints (its option and
# command tables) and its model key table, so the page never says other than arsim does.
#
# usage: scripts/man.sh ./arsim > arsim.1
set -eu
arsim=$1
version=$("$arsim" --version | sed 's/^arsim //')

# Help text, verbatim, as troff: backslashes doubled, a leading dot or quote made inert.
verbatim() {
    echo ".nf"
    sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
    echo ".fi"
}

cat <<EOF
.TH ARSIM 1 "" "arsim $version" "User Commands"
.SH NAME
arsim \\- simulate allreduce across many accelerators, and run it on NVIDIA GPUs
.SH SYNOPSIS
.B arsim
[\\fIoptions\\fR]
.br
.B arsim
\\fICOMMAND\\fR [\\fIoptions\\fR]
.SH DESCRIPTION
arsim predicts the time of allreduce algorithms on a topology of accelerators from a
hardware model (analytic and SimGrid backends), runs the same plans on real GPUs (cuda
backend) and checks the model against measurements. With no command it runs the default
study. The text below is what \\fBarsim \\-\\-help\\fR and \\fBarsim help\\fR \\fICOMMAND\\fR print.
.SH OVERVIEW
EOF
"$arsim" --help | verbatim
for cmd in $("$arsim" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }'); do
    echo ".SH COMMAND: $cmd" | tr '[:lower:]' '[:upper:]'
    "$arsim" help "$cmd" | verbatim
done
echo ".SH HARDWARE MODEL KEYS"
echo "The keys of a hardware model file (YAML), as \\fBarsim model keys\\fR lists them."
"$arsim" model keys | verbatim
cat <<EOF
.SH FILES
The shipped topologies, models and reference files lie under the data directory: the
installed one (\\fIshare/arsim\\fR under the prefix), the source tree's for an arsim run from
its build tree, or the one \\fB\\-\\-data\\-dir\\fR or \\fBARSIM_DATADIR\\fR names.
.SH ENVIRONMENT
.TP
.B ARSIM_DATADIR
the data directory (as \\fB\\-\\-data\\-dir\\fR).
.SH EXIT STATUS
0 ok, 1 a check failed, 2 bad input or usage (one line on standard error).
.SH SEE ALSO
README.md, docs/REFERENCE.md and docs/ARCHITECTURE.md of the arsim sources.
EOF
