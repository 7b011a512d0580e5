libarsim_la_SOURCES += topologies/topo.c topologies/load.c topologies/internal.h
EXTRA_DIST += topologies/README.md
nobase_dist_pkgdata_DATA += topologies/ring_1d_6.yaml topologies/ring_1d_8.yaml topologies/torus_2d_2x3.yaml \
	topologies/torus_2d_3x2.yaml topologies/mesh_2d_2x3.yaml topologies/torus_2d_4x4.yaml \
	topologies/hgx_h100_8.yaml topologies/h200_pair.yaml
