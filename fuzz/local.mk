# fuzz: libFuzzer targets for every parser of outside input, and the replay of
# their committed corpus by `make check`.
#
#   make check         replays fuzz/corpus/<target>/ through each target, built
#                      with the ordinary compiler (and sanitizers when configured so).
#   make fuzz          builds the targets with clang -fsanitize=fuzzer,address,undefined
#                      in $(FUZZ_BUILDDIR) (a second configure of this tree) and runs
#                      each for FUZZ_RUNS executions, at most FUZZ_SECONDS seconds;
#                      seeds: the committed corpus and every shipped topology and model.
#                      Any crash, leak, timeout or sanitizer report fails the target.
#   make fuzz-merge    minimises what the last `make fuzz` found into fuzz/corpus/.

FUZZ_TARGETS = topo model opts
FUZZ_RUNS = 1000000
FUZZ_SECONDS = 1800
FUZZ_TIMEOUT = 10
FUZZ_MAX_LEN = 16384
FUZZ_CC = clang
FUZZ_SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_BUILDDIR = $(abs_top_builddir)/fuzz-build
FUZZ_WORKDIR = $(abs_top_builddir)/fuzz-work

# Replay drivers, run by make check.
fuzz_replay_ldadd = libarsim.la
check_PROGRAMS += fuzz/replay_topo fuzz/replay_model fuzz/replay_opts
TESTS += fuzz/replay_topo fuzz/replay_model fuzz/replay_opts
fuzz_replay_topo_SOURCES = fuzz/replay.c fuzz/topo.c fuzz/fuzz.h
fuzz_replay_topo_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS='"$(abs_top_srcdir)/fuzz/corpus/topo"' \
	-DFUZZ_REGRESS='"$(abs_top_srcdir)/fuzz/regress/topo"'
fuzz_replay_topo_LDADD = $(fuzz_replay_ldadd)
fuzz_replay_model_SOURCES = fuzz/replay.c fuzz/model.c fuzz/fuzz.h
fuzz_replay_model_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS='"$(abs_top_srcdir)/fuzz/corpus/model"' \
	-DFUZZ_REGRESS='"$(abs_top_srcdir)/fuzz/regress/model"'
fuzz_replay_model_LDADD = $(fuzz_replay_ldadd)
fuzz_replay_opts_SOURCES = fuzz/replay.c fuzz/opts.c fuzz/fuzz.h cli/opts.c cli/opts.h
fuzz_replay_opts_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS='"$(abs_top_srcdir)/fuzz/corpus/opts"' \
	-DFUZZ_REGRESS='"$(abs_top_srcdir)/fuzz/regress/opts"'
fuzz_replay_opts_LDADD = $(fuzz_replay_ldadd)

# libFuzzer binaries: built only inside $(FUZZ_BUILDDIR), where the whole library
# is compiled with coverage instrumentation (-fsanitize=fuzzer-no-link).
EXTRA_PROGRAMS = fuzz/fuzz_topo fuzz/fuzz_model fuzz/fuzz_opts
fuzz_fuzz_topo_SOURCES = fuzz/topo.c fuzz/fuzz.h
fuzz_fuzz_topo_CFLAGS = $(AM_CFLAGS)
fuzz_fuzz_topo_LDFLAGS = -fsanitize=fuzzer
fuzz_fuzz_topo_LDADD = libarsim.la
fuzz_fuzz_model_SOURCES = fuzz/model.c fuzz/fuzz.h
fuzz_fuzz_model_CFLAGS = $(AM_CFLAGS)
fuzz_fuzz_model_LDFLAGS = -fsanitize=fuzzer
fuzz_fuzz_model_LDADD = libarsim.la
fuzz_fuzz_opts_SOURCES = fuzz/opts.c fuzz/fuzz.h cli/opts.c cli/opts.h
fuzz_fuzz_opts_CFLAGS = $(AM_CFLAGS)
fuzz_fuzz_opts_LDFLAGS = -fsanitize=fuzzer
fuzz_fuzz_opts_LDADD = libarsim.la

EXTRA_DIST += fuzz/corpus fuzz/regress fuzz/yaml.dict fuzz/run-fuzz.sh
CLEANFILES += $(EXTRA_PROGRAMS)

# Inside the fuzz build: just the binaries.
fuzz-bins: $(FUZZ_TARGETS:%=fuzz/fuzz_%$(EXEEXT))

# Configure (once) and build the instrumented tree, then run every target.
fuzz-build:
	@mkdir -p $(FUZZ_BUILDDIR)
	@if test ! -f $(FUZZ_BUILDDIR)/Makefile; then \
	  echo "  CONFIGURE fuzz build in $(FUZZ_BUILDDIR) (CC=$(FUZZ_CC))"; \
	  (cd $(FUZZ_BUILDDIR) && $(abs_top_srcdir)/configure -q CC=$(FUZZ_CC) CXX=$(FUZZ_CC)++ \
	     CFLAGS="-g -O1 -fsanitize=fuzzer-no-link $(FUZZ_SANFLAGS)" \
	     LDFLAGS="$(FUZZ_SANFLAGS)" --without-simgrid --with-cuda=no) || exit 1; \
	fi
	@cd $(FUZZ_BUILDDIR) && $(MAKE) $(AM_MAKEFLAGS) fuzz-bins

fuzz: fuzz-build
	@rc=0; for t in $(FUZZ_TARGETS); do \
	  FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_TIMEOUT=$(FUZZ_TIMEOUT) \
	  FUZZ_MAX_LEN=$(FUZZ_MAX_LEN) \
	  $(SHELL) $(srcdir)/fuzz/run-fuzz.sh $$t $(FUZZ_BUILDDIR)/fuzz/fuzz_$$t$(EXEEXT) \
	    $(abs_top_srcdir) $(FUZZ_WORKDIR) || rc=1; \
	done; exit $$rc

# Minimise the committed corpus together with what `make fuzz` kept.
fuzz-merge: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_WORKDIR)/merged-$$t && rm -f $(FUZZ_WORKDIR)/merged-$$t/* && \
	  $(FUZZ_BUILDDIR)/fuzz/fuzz_$$t$(EXEEXT) -merge=1 -max_len=$(FUZZ_MAX_LEN) \
	    $(FUZZ_WORKDIR)/merged-$$t $(abs_top_srcdir)/fuzz/corpus/$$t \
	    $(FUZZ_WORKDIR)/seed-$$t $(FUZZ_WORKDIR)/corpus-$$t 2>&1 | tail -n 2 && \
	  rm -f $(abs_top_srcdir)/fuzz/corpus/$$t/* && \
	  cp $(FUZZ_WORKDIR)/merged-$$t/* $(abs_top_srcdir)/fuzz/corpus/$$t/ && \
	  echo "fuzz/corpus/$$t: `ls $(abs_top_srcdir)/fuzz/corpus/$$t | wc -l` files" || exit 1; \
	done

clean-local: fuzz-clean-local
fuzz-clean-local:
	-rm -rf $(FUZZ_WORKDIR)

# (no .PHONY: automake wants it once, and bench/local.mk has it; none of these
# names is a file, and fuzz-build always runs, so each target always runs.)

# Limits (sizes, aliases, ranks, overflow): a Check program of its own.
if HAVE_CHECK
check_PROGRAMS += fuzz/check_limits
TESTS += fuzz/check_limits
fuzz_check_limits_SOURCES = fuzz/check_limits.c tests/util.c tests/suites.h
fuzz_check_limits_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) -DARSIM_BUILDDIR='"$(abs_top_builddir)"'
fuzz_check_limits_LDADD = libarsim.la $(CHECK_LIBS)
endif

# An interrupted sweep keeps every finished row; --resume runs only what is missing.
TESTS += tests/sweep_interrupt.sh
EXTRA_DIST += tests/sweep_interrupt.sh
