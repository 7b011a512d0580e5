arsim_SOURCES += cli/main.c
