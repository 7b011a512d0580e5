# runner/: one case from its plan to its row, for every command that runs algorithms.
libarsim_la_SOURCES += runner/case.c
