# model/: the hardware model: its key table, the loader and the shipped models.
libarsim_la_SOURCES += model/model.c
EXTRA_DIST += model/h100_sxm.yaml model/h200_sxm.yaml model/accel_tcm.yaml
