/* sim: what sim.c (the backend, C) and engine.cpp (SimGrid, C++) share.
 * Nothing outside sim/ uses this. */
#ifndef ARSIM_SIM_INTERNAL_H
#define ARSIM_SIM_INTERNAL_H

#ifdef __cplusplus
extern "C" {
#endif

#include "arsim/arsim.h" /* C declarations, also when engine.cpp includes them */

/* Builds the SimGrid platform for topo (memory level `opts->buffer`), runs one
 * execution of plan on it and fills res (time, terms, cycles, per-link stats when
 * opts->breakdown, ops_executed). SimGrid keeps one engine per process and never
 * frees it, so this runs once per process: sim.c calls it in a child. */
extern const ar_backend_ops_t ar_sim_backend;

/* Whether the actors of `actors` channels may keep their stacks' guard pages: each guard
 * costs a memory mapping, and past the kernel's per-process limit (vm.max_map_count,
 * 65530 by default) SimGrid aborts; without guards a stack is plain memory, all of it held. */
int ar__sim_guard_pages(long actors);
/* Whether ARSIM_SIM_TRACE=1 asks for every op on stderr (engine.cpp prints them; sim.c then
 * leaves the child's stderr the user's instead of SimGrid's log file). */
int ar__sim_trace(void);
/* The stack SimGrid gives each channel's actor (contexts/stack-size), in KiB. */
#define AR__SIM_STACK_KIB 128

int ar__sim_engine_run(const ar_topo_t *topo, const ar_plan_t *plan, const ar_run_opts_t *opts,
                       ar_result_t *res, ar_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
