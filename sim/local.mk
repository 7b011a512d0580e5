# sim: the SimGrid timing backend (sim.c: the backend, C; engine.cpp: the platform
# and actors, S4U C++).
if HAVE_SIMGRID
libarsim_la_SOURCES += sim/sim.c sim/engine.cpp sim/internal.h sim/netmodel.hpp
# libtool drops -lstdc++ from a C++ convenience library (the C++ driver would add
# it), but arsim and the tests link with the C driver: name the library by its file.
libarsim_la_LIBADD += -l:libstdc++.so.6
endif
