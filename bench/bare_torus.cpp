/* The floor arsim's sim backend is measured against: a bare SimGrid (S4U) program of
 * torus2d's pattern, one actor per device of a W x H torus zone (split-duplex links of
 * the accel_tcm model's 100 GB/s and 150 ns, under the sim backend's network model), one
 * communication per ring step along X then Y: reduce-scatter along X (W - 1 steps of S/W),
 * reduce-scatter and all-gather along Y (2(H - 1) steps of S/(W H)), all-gather along X
 * (W - 1 steps of S/W). Nothing else: no memories, no channels, no plan, so its simulated
 * time is the links' alone. bench/simbench runs it beside the sim backend.
 *
 *   bare_torus W H BYTES
 *
 * prints one line: "bare W H comms N wall_s T peak_kb M simulated_us U". */
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include "sim/netmodel.hpp"
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

static int W, H;
static double S;

static void device(int id) {
    const int x = id % W, y = id / W;
    sg4::Mailbox *in = sg4::Mailbox::by_name("d" + std::to_string(id));
    sg4::Mailbox *xnext = sg4::Mailbox::by_name("d" + std::to_string(y * W + (x + 1) % W));
    sg4::Mailbox *ynext = sg4::Mailbox::by_name("d" + std::to_string(((y + 1) % H) * W + x));
    static int payload;
    auto step = [&](sg4::Mailbox *to, double bytes) {
        int *got = nullptr;
        sg4::CommPtr r = in->get_async<int>(&got);
        sg4::CommPtr s = to->put_async(&payload, (uint64_t)bytes);
        s->wait();
        r->wait();
    };
    for (int k = 0; k < W - 1; k++) step(xnext, S / W);
    for (int k = 0; k < 2 * (H - 1); k++) step(ynext, S / (W * H));
    for (int k = 0; k < W - 1; k++) step(xnext, S / W);
}

int main(int argc, char **argv) {
    sg4::Engine e(&argc, argv);
    if (argc != 4 || (W = atoi(argv[1])) < 2 || (H = atoi(argv[2])) < 2 || (S = atof(argv[3])) <= 0) {
        fprintf(stderr, "usage: bare_torus W H BYTES (W, H >= 2)\n");
        return 2;
    }
    /* The network model arsim's sim backend sets: the same sharing, no latency or bandwidth
     * factors, no reverse traffic; its clock starts, as arsim's, once the engine is set up. */
    xbt_log_control_set("root.thresh:critical");
    ar__sim_network_model(e);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<sg4::Host *> hosts((size_t)W * H);
    auto *zone = sg4::create_torus_zone(
        "torus", nullptr, {(unsigned long)W, (unsigned long)H},
        sg4::ClusterCallbacks([&hosts](sg4::NetZone *z, const std::vector<unsigned long> &, unsigned long id) {
            hosts[id] = z->create_host("d" + std::to_string(id), 1e9);
            return std::make_pair(hosts[id]->get_netpoint(), nullptr);
        }),
        100e9, 150e-9, sg4::Link::SharingPolicy::SPLITDUPLEX);
    zone->seal();
    for (int id = 0; id < W * H; id++) sg4::Actor::create("a" + std::to_string(id), hosts[(size_t)id], device, id);
    e.run();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("bare %d %d comms %ld wall_s %.6f peak_kb %ld simulated_us %.3f\n", W, H,
           (long)W * H * (2L * (W - 1) + 2L * (H - 1)), wall, ru.ru_maxrss, sg4::Engine::get_clock() * 1e6);
    return 0;
}
