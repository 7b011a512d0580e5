# validate/: reference data, CSV reading, calibration -> model file, model-vs-measured.
libarsim_la_SOURCES += validate/internal.h validate/csv.c validate/refs.c validate/calib_yaml.c \
	hw/calib.h
EXTRA_DIST += hw/calib.cu validate/calib_none.c
if HAVE_CUDA
# hw/calib.cu, the calibration micro-benchmarks: compiled by nvcc into a libtool
# object by hand, as hw/local.mk does for the executor.
libarsim_la_LIBADD += hw/calib.lo
CLEANFILES += hw/calib.lo hw/calib.o
VALIDATE_NVCC_CMD = $(NVCC) $(NVCCFLAGS) -Xcompiler -fPIC -I$(top_srcdir) -I$(top_srcdir)/include -I$(top_builddir)
hw/calib.lo: $(srcdir)/hw/calib.cu $(srcdir)/hw/calib.h $(srcdir)/include/arsim/error.h
	@$(MKDIR_P) hw
	$(AM_V_GEN)$(VALIDATE_NVCC_CMD) -c $(srcdir)/hw/calib.cu -o hw/calib.o && \
	printf "# hw/calib.lo - a libtool object file (built by nvcc)\npic_object='calib.o'\nnon_pic_object='calib.o'\n" > $@
else
libarsim_la_SOURCES += validate/calib_none.c
endif
dist_noinst_DATA += validate/refs/fsim_accel.csv validate/refs/mojo_h100_pair.csv \
	validate/refs/nccl_h200_pair.csv
