# bench: `make bench` builds and runs the model backends' speed benchmark (ring and
# torus2d allreduce at 16 .. 16384 devices on sim and analytic, every rank's ops and rank
# 0's for all (docs/SIM.md, "Symmetry"), beside a bare SimGrid program: wall time, ops per
# second, peak memory; bench/scaling.csv and, with matplotlib,
# the scaling figure bench/scaling.png), then
# the what-if efficiency table (scripts/efficiency.sh: each algorithm on its topology at
# its defaults, its share of the physical bound). Not part of `make check`. BENCH_ARGS
# passes options (see bench/simbench.c). bench/symm_mem.py, run on a GPU machine with
# PyTorch (scripts/gpu-check.sh), times PyTorch's symmetric-memory allreduces beside NCCL
# for `arsim bench` to be compared with; its results are in bench/results/.
.PHONY: bench
EXTRA_DIST += scripts/efficiency.sh plots/scaling.py bench/symm_mem.py bench/results
if HAVE_SIMGRID
noinst_PROGRAMS += bench/simbench bench/bare_torus
bench_simbench_SOURCES = bench/simbench.c
bench_simbench_LDADD = libarsim.la -lm
bench_bare_torus_SOURCES = bench/bare_torus.cpp
bench_bare_torus_CPPFLAGS = $(AM_CPPFLAGS) $(SIMGRID_CFLAGS)
bench_bare_torus_LDADD = $(SIMGRID_LIBS)

bench: bench/simbench$(EXEEXT) bench/bare_torus$(EXEEXT) arsim$(EXEEXT)
	./bench/simbench$(EXEEXT) --bare ./bench/bare_torus$(EXEEXT) --csv bench/scaling.csv $(BENCH_ARGS)
	-$(PYTHON_PLOT) $(srcdir)/plots/scaling.py bench/scaling.csv -o bench/scaling.png
	ARSIM=./arsim$(EXEEXT) $(SHELL) $(srcdir)/scripts/efficiency.sh
else
bench: arsim$(EXEEXT)
	@echo "make bench: this build has no sim backend (configure found no SimGrid): the efficiency table alone"
	ARSIM=./arsim$(EXEEXT) $(SHELL) $(srcdir)/scripts/efficiency.sh
endif
