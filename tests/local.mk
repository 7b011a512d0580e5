if HAVE_CHECK
check_PROGRAMS += tests/check_arsim
TESTS += tests/check_arsim
tests_check_arsim_SOURCES = tests/check_main.c tests/suites.h tests/util.c \
	tests/check_core.c tests/check_topo.c tests/check_model.c tests/check_plan.c \
	tests/check_algos.c tests/check_ref.c tests/check_analytic.c tests/check_cli.c \
	tests/check_validate.c
if HAVE_SIMGRID
tests_check_arsim_SOURCES += tests/check_sim.c
endif
tests_check_arsim_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) -DARSIM_BUILDDIR='"$(abs_top_builddir)"'
tests_check_arsim_LDADD = libarsim.la $(CHECK_LIBS)
# A model key added in one line of the table: parsed, written, listed.
check_PROGRAMS += tests/check_model_keys
TESTS += tests/check_model_keys
tests_check_model_keys_SOURCES = tests/check_model_keys.c
tests_check_model_keys_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) $(YAML_CFLAGS)
tests_check_model_keys_LDADD = libarsim.la $(CHECK_LIBS)
endif
EXTRA_DIST += tests/data
# The Check runner prints its summary on fd 9 too, which reaches the terminal.
AM_TESTS_FD_REDIRECT = 9>&2
# Predictions hold still (tests/data/predictions: regenerate only on purpose).
TESTS += tests/predictions.sh
EXTRA_DIST += tests/predictions.sh
# Rooms import only what docs/ARCHITECTURE.md allows.
TESTS += tests/rooms.sh
EXTRA_DIST += tests/rooms.sh
# Docs generated from the code's tables stay equal to them.
TESTS += tests/docs.sh
EXTRA_DIST += tests/docs.sh
# Outputs are never destroyed and what was computed is never silently lost.
TESTS += tests/outputs.sh
EXTRA_DIST += tests/outputs.sh
# Careless flags are refused in one line with exit 2.
TESTS += tests/flags.sh
EXTRA_DIST += tests/flags.sh
# Random command lines: exit 0, 1 or 2, never a signal or a hang; exit 0 leaves
# well-formed output (60 s here; `make fuzz-cli` for longer: FUZZ_CLI_SECONDS).
TESTS += tests/cli_fuzz.py
EXTRA_DIST += tests/cli_fuzz.py
FUZZ_CLI_SECONDS = 600
fuzz-cli: arsim$(EXEEXT)
	ARSIM=./arsim$(EXEEXT) $(srcdir)/tests/cli_fuzz.py --seconds $(FUZZ_CLI_SECONDS)
