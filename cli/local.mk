arsim_SOURCES += cli/main.c cli/internal.h cli/opts.c cli/opts.h cli/report.c cli/run.c \
	cli/list.c cli/topo.c cli/sweep.c cli/bench.c cli/validate.c cli/calibrate.c cli/model.c cli/plot.c cli/bound.c
