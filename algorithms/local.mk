libarsim_la_SOURCES += algorithms/internal.h algorithms/util.c algorithms/registry.c \
	algorithms/ring.c algorithms/torus2d.c algorithms/mesh2d.c algorithms/oneshot.c \
	algorithms/twoshot.c algorithms/center_root.c algorithms/naive.c algorithms/auto.c \
	algorithms/probes.c algorithms/innet.c algorithms/direct.c algorithms/fused.c
