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
# Scripts, each a test of its own:
#   predictions.sh  predictions hold still (tests/data/predictions: regenerate only on purpose)
#   rooms.sh        rooms import only what docs/ARCHITECTURE.md allows
#   docs.sh         docs generated from the code's tables stay equal to them
#   outputs.sh      outputs are never destroyed, what was computed never silently lost
#   flags.sh        careless flags are refused in one line with exit 2
#   plot.sh         arsim plot draws every kind of arsim CSV, refuses what it cannot draw
#   reproduce.sh    scripts/reproduce.sh writes only under its OUT folder
#   tutorial.sh     every command of docs/TUTORIAL.md and docs/WHATIF.md runs
#   validate_rows.sh  validate matches bench's labels, and never passes rows it cannot compare
#   shards.sh       examples/ (GNU parallel, Slurm array): shards merged are the whole sweep
#   progress.sh     a long run on a terminal says how it goes; silent under -q and into a file
#   bound_property.py  no backend beats the physical bound, over random cases
#   analytic_vs_sim.py the analytic backend within 10% (median) and 25% (max) of sim
#   smoothness.py   at the defaults time grows with size, algbw never drops past 2%
#   cli_fuzz.py     random command lines: exit 0, 1 or 2, never a signal or a hang, and
#                   well-formed output on exit 0 (60 s; `make fuzz-cli`: FUZZ_CLI_SECONDS)
test_scripts = tests/predictions.sh tests/rooms.sh tests/docs.sh tests/outputs.sh tests/flags.sh \
	tests/plot.sh tests/reproduce.sh tests/tutorial.sh tests/bound_property.py tests/analytic_vs_sim.py \
	tests/smoothness.py tests/cli_fuzz.py tests/validate_rows.sh tests/shards.sh tests/progress.sh tests/max_mem.sh
TESTS += $(test_scripts)
EXTRA_DIST += $(test_scripts) tests/lib.sh examples
FUZZ_CLI_SECONDS = 600
fuzz-cli: arsim$(EXEEXT)
	ARSIM=./arsim$(EXEEXT) $(srcdir)/tests/cli_fuzz.py --seconds $(FUZZ_CLI_SECONDS)
