# model/: the hardware model: its key table, the loader and the shipped models.
libarsim_la_SOURCES += model/model.c
# Installed under pkgdatadir (and distributed): an installed arsim reads them there.
nobase_dist_pkgdata_DATA += model/h100_sxm.yaml model/h200_sxm.yaml model/accel_tcm.yaml
