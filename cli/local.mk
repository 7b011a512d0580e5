arsim_SOURCES += cli/main.c cli/internal.h cli/sweep.c cli/bench.c cli/validate.c
