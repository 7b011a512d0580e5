#!/bin/sh
# Regenerate the build system (configure, Makefile.in).
set -e
cd "$(dirname "$0")"
mkdir -p m4
autoreconf -fi
