#!/bin/sh
# Rooms import only what docs/ARCHITECTURE.md allows them: every #include "ROOM/..."
# of a room's sources names a room on its list (arsim/ is the public surface every
# room may use). A new include across rooms fails here until the architecture says so.
# Run by `make check` (TESTS).
set -u
srcdir=${srcdir:-.}
cd "$srcdir" || exit 99
status=0
allow() { # room, then the rooms it may include
    room=$1
    shift
    for f in "$room"/*.c "$room"/*.cpp "$room"/*.cu "$room"/*.h "$room"/*.cuh; do
        [ -f "$f" ] || continue
        for inc in $(sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p' "$f" | sort -u); do
            ok=0
            for a in arsim "$room" "$@"; do [ "$inc" = "$a" ] && ok=1; done
            case "$f" in hw/gpu_test.c) [ "$inc" = validate ] && ok=1 ;; esac # a test of the executor
            if [ $ok = 0 ]; then
                echo "rooms: FAIL: $f includes $inc/ (allowed: arsim $room $*)"
                status=1
            fi
        done
    done
}
allow common
allow model common
allow cost
allow topologies common
allow algorithms
allow backends
allow runner
allow sim backends
allow hw
allow validate hw
allow cli validate
[ $status = 0 ] && echo "rooms: every include within the allowed rooms"
exit $status
