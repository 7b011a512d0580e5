/* The network model of the sim backend's engine, one place for it and for the bare SimGrid
 * program it is measured against (bench/bare_torus.cpp), which must simulate the same links.
 * Header only: the bare program links SimGrid alone. */
#ifndef ARSIM_SIM_NETMODEL_HPP
#define ARSIM_SIM_NETMODEL_HPP
#include <simgrid/s4u.hpp>

/* CM02 with no bandwidth factor and no reverse traffic: a flow streams at its max-min share of
 * its links. Its latency factor is 1 by default (the sim backend sets one per op). TCP's gamma
 * must be huge: in 3.32 a gamma of 0 bounds every flow to zero. */
static inline void ar__sim_network_model(simgrid::s4u::Engine &e) {
    e.set_config("network/model:CM02");
    e.set_config("network/bandwidth-factor:1");
    e.set_config("network/TCP-gamma:1e30");
    e.set_config("network/crosstraffic:0");
    /* Nanosecond ops in millisecond runs: the default precision (1e-9 s) is a whole op's worth. */
    e.set_config("surf/precision:1e-13");
    e.set_config("maxmin/precision:1e-5");
}
#endif
