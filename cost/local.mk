# cost/: the cost of one op from the model's terms, and the channel clock that the
# analytic and sim backends share.
libarsim_la_SOURCES += cost/internal.h cost/cost.c cost/clock.c cost/bound.c
