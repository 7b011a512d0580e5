libarsim_la_SOURCES += backends/registry.c backends/ref.c backends/analytic.c backends/internal.h
