# bench: `make bench` builds and runs the sim backend's speed benchmark (ring and
# torus2d allreduce at 64 .. 4096 devices: wall time, ops per second, peak memory).
# Not part of `make check`. BENCH_ARGS passes options (see bench/simbench.c).
.PHONY: bench
if HAVE_SIMGRID
noinst_PROGRAMS += bench/simbench
bench_simbench_SOURCES = bench/simbench.c
bench_simbench_LDADD = libarsim.la -lm

bench: bench/simbench$(EXEEXT)
	./bench/simbench$(EXEEXT) $(BENCH_ARGS)
else
bench:
	@echo "make bench: this build has no sim backend (configure found no SimGrid)"; exit 1
endif
