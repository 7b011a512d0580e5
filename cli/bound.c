/* arsim bound: the physical bound of an allreduce on a topology, term by term
 * (arsim/bound.h), for each size: what no algorithm on any backend may beat. */
#include <inttypes.h>
#include <stdio.h>
#include "cli/internal.h"
#include "cli/opts.h"

int ar_cli_bound(int argc, char **argv) {
    const ar_cli_extra_t extra = {
        .usage = "The bound is launch + the largest of: latency (farthest devices' hops x the lowest link\n"
                 "latency), injection (size over the narrowest device's links, or 2(D-1) x size over\n"
                 "all the devices' links together, whichever is longer; switches that add, the model's\n"
                 "switch_reduce, leave the first alone), cut (size over the narrowest\n"
                 "cut between devices) and memory (2 x size x ranks per device over the buffer level),\n"
                 "over the devices' own links; via-host is the bound of a plan that also stages through\n"
                 "the host's links (naive). docs/REFERENCE.md gives why each holds.\n",
        .takes = AR_CLI_O(TOPOLOGY) | AR_CLI_O(MODEL) | AR_CLI_O(SET) | AR_CLI_O(SIZE) | AR_CLI_O(COUNT) | AR_CLI_O(DTYPE) |
                 AR_CLI_O(BUFFER) | AR_CLI_O(RANKS) | AR_CLI_O(QUIET),
    };
    ar_cli_opts_t o;
    int rc = ar_cli_opts_parse("bound", argc, argv, 0, &extra, &o);
    if (rc != AR_CLI_OK) {
        ar_cli_opts_free(&o);
        return rc == AR_CLI_HELP ? 0 : rc;
    }
    ar_topo_t *t = NULL;
    if ((rc = ar_cli_topo_open(&o, o.topos[0], &t)) != AR_CLI_OK) goto out;
    const ar_mem_t buffer = o.buffers[0];
    const ar_dtype_t dt = o.dtypes[0];
    for (int i = 0; i < ar_cli_nsizes(&o); i++) {
        uint64_t bytes, count;
        ar_cli_size_at(&o, i, dt, &bytes, &count);
        ar_bound_t b, h;
        ar_error_t err;
        ar_error_clear(&err);
        if (ar_bound(t, bytes, buffer, 0, &b, &err) != AR_OK || ar_bound(t, bytes, buffer, 1, &h, &err) != AR_OK) {
            rc = ar_cli_fail_err("bound", &err);
            break;
        }
        if (i == 0) {
            char inj[32], sum[32], cut[32], mem[32];
            printf("# arsim bound: topology %s (%s, %d devices, %d links, %d ranks), model %s, buffer %s\n",
                   t->name[0] ? t->name : o.topos[0], ar_topo_kind_name(t->kind), t->ndevices, t->nlinks, t->nranks,
                   t->model->name, ar_mem_name(buffer));
            printf("# narrowest device's links %s, all devices' links %s, narrowest cut %s (per direction), "
                   "farthest devices %d hop%s, memory %s\n",
                   ar_rate_human(b.inject_gbps, inj, sizeof inj), ar_rate_human(b.inject_sum_gbps, sum, sizeof sum),
                   b.cut_gbps > 0 ? ar_rate_human(b.cut_gbps, cut, sizeof cut) : "-", b.max_hops,
                   b.max_hops == 1 ? "" : "s", ar_rate_human(b.memory_gbps, mem, sizeof mem));
            printf("#%11s %13s %11s %9s %9s %11s %11s %11s %10s %12s %13s\n", "size", "count", "bound(us)", "launch",
                   "latency", "injection", "cut", "memory", "binds", "busbw(GB/s)", "via-host(us)");
        }
        printf("%12" PRIu64 " %13" PRIu64 " %11.3f %9.3f %9.3f %11.3f %11.3f %11.3f %10s %12.2f %13.3f\n", bytes,
               count, b.time_s * 1e6, b.launch_s * 1e6, b.latency_s * 1e6, b.injection_s * 1e6, b.cut_s * 1e6,
               b.memory_s * 1e6, b.binding, ar_busbw_gbps(bytes, b.time_s, t->nranks), h.time_s * 1e6);
    }
    ar_topo_free(t);
out:
    ar_cli_opts_free(&o);
    return rc;
}
