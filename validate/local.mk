# validate/: reference data, CSV reading, model-vs-measured comparison.
libarsim_la_SOURCES += validate/internal.h validate/csv.c validate/refs.c
dist_noinst_DATA += validate/refs/fsim_accel.csv validate/refs/mojo_h100_pair.csv \
	validate/refs/nccl_h200_pair.csv
