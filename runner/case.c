/* One case from its plan to its row (arsim/case.h). */
#include <inttypes.h>
#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "arsim/arsim.h"
#include "arsim/bound.h"
#include "arsim/case.h"

/* ---- default channels: the count of least predicted time, kept with the topology ---- */

typedef struct tune_key_s {
    const ar_algo_t *algo;
    const ar_model_t *model;
    uint64_t count, chunk_bytes;
    int dtype, buffer, root, grid_w, grid_h, slots, channels; /* channels: as asked (0: chosen) */
    int hardware, coll, lanes_asked; /* stage 1: the channels were asked, not found */
    int stage; /* 0: the channels, found at the count up to AR_CASE_TUNE_MAX_BYTES; 1: then the chunk, at the count */
} tune_key_t;

typedef struct tune_cache_s { /* one allocation, grown by realloc */
    int n, cap;
    struct { tune_key_t key; int channels; uint64_t chunk_bytes; double time_s; } e[];
} tune_cache_t;

static int tune_find(const ar_topo_t *t, const tune_key_t *k, ar_algo_opts_t *o, double *time_s) {
    const tune_cache_t *tc = t->tune_cache;
    for (int i = 0; tc && i < tc->n; i++)
        if (!memcmp(&tc->e[i].key, k, sizeof *k)) {
            o->channels = tc->e[i].channels;
            o->chunk_bytes = tc->e[i].chunk_bytes;
            *time_s = tc->e[i].time_s;
            return 1;
        }
    return 0;
}

static void tune_keep(const ar_topo_t *t, const tune_key_t *k, const ar_algo_opts_t *o, double time_s) {
    tune_cache_t *tc = t->tune_cache;
    if (!tc || tc->n == tc->cap) {
        const int cap = tc ? 2 * tc->cap : 16;
        tune_cache_t *g = realloc(tc, sizeof *g + (size_t)cap * sizeof g->e[0]);
        if (!g) return; /* not kept: found again next time */
        if (!tc) g->n = 0;
        g->cap = cap;
        ((ar_topo_t *)t)->tune_cache = tc = g; /* a cache of what t already determines */
    }
    memcpy(&tc->e[tc->n].key, k, sizeof *k);
    tc->e[tc->n].time_s = time_s;
    tc->e[tc->n].chunk_bytes = o->chunk_bytes;
    tc->e[tc->n++].channels = o->channels;
}

/* The ops of rank 0's channels: every rank handles each piece of the vector, so two
 * plans of one algorithm at one count hold as many as they have pieces. */
static uint64_t rank0_ops(const ar_plan_t *p) {
    uint64_t n = 0;
    for (int c = 0; c < p->nchannels; c++) n += ar_plan_chan(p, ar_plan_first_kept(p), c)->nops;
    return n;
}

/* The hops past the first of every operand a plan of one rank's data ops reach: a model
 * backend walks each hop of a route, so rank 0's ops on a ring of 16384 devices, whose peers
 * sit up to 8192 hops away (2stage: 49 K ops, 2e8 hops), cost what as many ops would. Every
 * rank's plans of the same algorithm are counted by their ops alone: they reach as far, and
 * are searched where they are small. */
static uint64_t far_hops(const ar_topo_t *t, const ar_plan_t *p) {
    if (p->only_rank < 0) return 0;
    uint64_t n = 0;
    for (int r = p->only_rank; r < p->only_rank + p->only_span; r++)
        for (int c = 0; c < p->nchannels; c++) {
            const ar_chan_t *ch = ar_plan_chan(p, r, c);
            const int e = t->placement[r];
            for (uint32_t i = 0; i < ch->nops; i++) {
                const ar_op_t *op = &p->ops[ch->first + i];
                if (!ar_op_moves_data(op)) continue;
                for (uint32_t s = 0; s <= op->nsrc; s++) {
                    const int d = ar_topo_rank_device(t, ar_op_operand(p, op, s)->rank);
                    const int h = d >= 0 && d != e ? ar_topo_hops(t, e, d) : 0;
                    if (h > 1) n += (uint64_t)h - 1;
                }
            }
        }
    return n;
}

/* Whether rank 0's plan may stand for every rank's at these options (ar_algo_build tries it):
 * an algorithm that builds one rank's ops, on a topology whose translations it may stand on. */
static int may_stand_for_all(const ar_algo_t *a, const ar_topo_t *t, const ar_algo_opts_t *o) {
    return a->one_rank && o->symmetry != AR_SYMMETRY_OFF && ar_topo_translatable(t, 0);
}

/* o's options for counting a plan into size, up to max_ops (ar_plan_size_t), its buffers in
 * buffer, every rank's unless the caller asks for rank 0's alone. */
static ar_algo_opts_t sizing_opts(const ar_algo_opts_t *o, ar_plan_size_t *size, uint64_t max_ops, ar_mem_t buffer) {
    memset(size, 0, sizeof *size);
    size->max_ops = max_ops;
    ar_algo_opts_t k = *o;
    k.sizing = size;
    k.buffer = buffer;
    return k;
}

/* Whether the algorithm's buffers at these options fit the model's memory at the case's size
 * (AR_OK, or the error that says what does not; ar_cost_check_capacity): where they do not,
 * no channels or chunk make them (their slots hold the vector, not the pieces), and the
 * defaults' search and the memory check would build plans to learn it (1stage on switch:1024
 * at 1 GB, 1 TB of slots a rank: 79 s). Rank 0's plan (or every rank's, for an algorithm that
 * builds no plan of one rank) counted, not built, up to 2^23 ops, or the buffers it had set
 * when the count stopped there (center_root's slots for its root's children, before its ops:
 * 1.1 TB on switch:1024 at 1 GB, said at once rather than after the search). */
static int check_capacity(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                          ar_mem_t buffer, ar_error_t *err) {
    ar_plan_size_t size;
    /* past 8x the search's ops (every rank's, where rank 0's are not an algorithm's own), the
     * run's checks say it */
    ar_algo_opts_t k = sizing_opts(o, &size, AR_CASE_TUNE_MAX_OPS * 8, buffer);
    k.symmetry = AR_SYMMETRY_OFF;
    const ar_algo_t *a = ar_algo_find(algo);
    k.one_rank = a && a->one_rank; /* else every rank's, as the algorithm builds */
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    int rc = AR_OK, check;
    if (ar_algo_build(algo, t, count, dt, &k, &p, &e) == AR_OK && p)
        check = ar_cost_check_capacity(t, p, buffer, &e);
    else if (size.over) /* the buffers set before the count stopped: at least these */
        check = ar_cost_check_rank_bytes(t, (double)(size.in_elems + count + size.scratch_elems) * ar_dtype_size(dt),
                                         buffer, &e);
    else
        check = AR_OK; /* the build's own error: the run says it */
    if (check == AR_ELIMIT) rc = ar_error_set(err, AR_ELIMIT, NULL, 0, 0, "%s", e.message);
    ar_plan_free(p);
    ar_plan_size_free(&size);
    return rc;
}

/* p's time on the analytic backend, p freed; INFINITY where target would not run it or its
 * floor (ar_bound_own_floor) is past max_s (0: any). shown (may be NULL): whose progress notes a
 * long run gives (a run the caller waits for). keep (may be NULL): where it ran, its result,
 * the caller's to free. */
static double time_plan_kept(const ar_topo_t *t, ar_plan_t *p, double max_s, ar_mem_t buffer,
                             const ar_backend_ops_t *target, const ar_run_opts_t *shown, ar_result_t *keep,
                             ar_error_t *err) {
    ar_run_opts_t run = AR_RUN_OPTS_DEFAULT;
    run.buffer = buffer;
    /* kept: a plan auto times whole to see whether it beats max_s, the rest of a walk past it
     * is of no use (torus2d's 25 M ops on mesh_2d:128x128 at 8 KB stop at 115 of 275 us); its
     * floor, which walks every op's route, is then no shortcut (rank 0's was taken before) */
    const int stops = keep && max_s > 0;
    if (stops) run.stop_past_s = max_s;
    if (shown) run.progress = shown->progress, run.progress_ctx = shown->progress_ctx;
    ar_error_t refused;
    if ((target && target->admits && target->admits(t, p, &refused) != AR_OK) ||
        (max_s > 0 && !stops && ar_bound_own_floor(t, p, buffer, max_s) > max_s)) {
        ar_plan_free(p);
        return INFINITY;
    }
    ar_result_t res;
    const int rc = ar_backend_run("analytic", t, p, &run, &res, err);
    ar_plan_free(p);
    if (keep && rc == AR_OK) *keep = res;
    else ar_result_free(&res);
    return rc == AR_OK ? res.time_s : INFINITY;
}

static double time_plan(const ar_topo_t *t, ar_plan_t *p, double max_s, ar_mem_t buffer, const ar_backend_ops_t *target,
                        const ar_run_opts_t *shown, ar_error_t *err) {
    return time_plan_kept(t, p, max_s, buffer, target, shown, NULL, err);
}

/* Rank 0's ops in o's plan (rank0_ops), counted without building it, rank 0's alone (no
 * other rank's ops, nor the plans of other ranks that would show whether rank 0's stand for
 * theirs); 0 where it cannot be built. */
static uint64_t count_rank0_ops(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt,
                                const ar_algo_opts_t *o, ar_mem_t buffer) {
    ar_plan_size_t size;
    ar_algo_opts_t k = sizing_opts(o, &size, 0, buffer);
    k.symmetry = AR_SYMMETRY_OFF;
    k.one_rank = 1;
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    const int rc = ar_algo_build(algo, t, count, dt, &k, &p, &e);
    ar_plan_free(p);
    return rc == AR_OK ? size.ops : 0;
}

/* The predicted time of the algorithm with these options, INFINITY when its plan cannot
 * be built or run, or has more than max_ops ops (0: any; such a plan is not built: *build_rc
 * AR_ELIMIT; a plan of one rank's ops counts its far hops as ops too, far_hops); *build_rc the
 * build's status (its error in err), *nops the plan's ops (and far hops), *nops0 (where not
 * NULL) rank 0's ops. */
static double predict_count(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt,
                            const ar_algo_opts_t *o, ar_mem_t buffer, const ar_backend_ops_t *target, uint64_t max_ops,
                            int *build_rc, uint64_t *nops, uint64_t *nops0, int *by_rank0, ar_error_t *err) {
    ar_plan_t *p = NULL;
    *nops = 0;
    *by_rank0 = 0;
    if (nops0) *nops0 = 0;
    ar_algo_opts_t at = *o;
    at.buffer = buffer;
    at.max_ops = max_ops; /* past it the plan is not timed: not built either */
    *build_rc = ar_algo_build(algo, t, count, dt, &at, &p, err);
    /* every rank's plan past the cap, which rank 0's only stands in for from 2^20 ops on
     * (AR_SYMMETRY_AUTO): rank 0's where it may, whose time is theirs (2stage on full:32 at
     * 16 MB, h200_sxm: the channel search stopped at 2 and took 4 channels, 628 us, where 32
     * predict 158) */
    const ar_algo_t *a = ar_algo_find(algo);
    if (*build_rc == AR_ELIMIT && max_ops && at.symmetry == AR_SYMMETRY_AUTO && a && may_stand_for_all(a, t, &at)) {
        at.symmetry = AR_SYMMETRY_ON;
        ar_error_clear(err);
        *build_rc = ar_algo_build(algo, t, count, dt, &at, &p, err);
    }
    if (*build_rc != AR_OK) return INFINITY;
    *nops = (uint64_t)p->nops + far_hops(t, p);
    if (nops0) *nops0 = rank0_ops(p);
    *by_rank0 = p->only_rank >= 0;
    if (max_ops && *nops > max_ops) {
        ar_plan_free(p);
        return INFINITY;
    }
    return time_plan(t, p, o->max_s, buffer, target, NULL, err);
}

/* The step of the even counts around count with `lanes` lanes (AR_CASE_EVEN_SPAN): ranks x
 * the grain x the lanes, the grain a line (fine: the grain the algorithms cut parts of that
 * size on, ar_algo_split_grain; aligned: 16 bytes at least, where parts at their own grain
 * may lie on whole vectors on some ranks and off them on others, which a plan of one rank
 * must keep alike, ar_op_misaligned), where that is count / AR_CASE_EVEN_STEP
 * (fine: AR_CASE_EVEN_FINE_STEP) or less; else 0. by_rows: the step where a row of t's grid
 * stands for all (a plan of a row, arsim/plan.h), the grid's rows in place of the ranks, parts
 * even along the columns (a torus_2d, a rank a device); else 0. */
static uint64_t even_step(const ar_topo_t *t, uint64_t count, ar_dtype_t dt, int lanes, int by_rows, int fine,
                          int aligned) {
    uint64_t parts = (uint64_t)t->nranks;
    if (by_rows) {
        if (t->kind != AR_TOPO_TORUS_2D || t->nranks != t->ndevices || t->grid_w < 2 || t->grid_w >= t->nranks) return 0;
        parts = (uint64_t)(t->nranks / t->grid_w);
    }
    const uint64_t l = (uint64_t)(lanes > 0 ? lanes : 1), vec = ar_vec_elems(dt);
    uint64_t grain = fine ? ar_algo_split_grain(count / l / parts) : AR_ALGO_SPLIT_LINE;
    if (aligned && grain < vec) grain = vec;
    const uint64_t m = parts * l * grain;
    return m <= count / (fine ? AR_CASE_EVEN_FINE_STEP : AR_CASE_EVEN_STEP) ? m : 0;
}

/* Most steps even_eligible finds: by rows and by the whole grid, each at its parts' grain and
 * at 16 bytes. */
#define EVEN_STEPS 4

/* Whether count is one to time at the even counts around it with options o on t: rank 0's
 * plan may stand for every rank's, and the count is not even itself at a step of
 * even_step's: at a line's, where every rank's plan would hold AR_ALGO_ONE_RANK_MIN_OPS ops
 * or more; else at the finer grain of its parts, where it would hold AR_CASE_EVEN_FINE_OPS
 * or more. steps[*n], those steps to try in turn: by rows first (0: none, or count is even
 * at it). Whether rank 0's stands at count is the caller's to ask (ar_algo_rank0_stands). */
static int even_eligible(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                         ar_mem_t buffer, uint64_t steps[EVEN_STEPS], int *n) {
    const ar_algo_t *a = ar_algo_find(algo);
    *n = 0;
    if (!a || a->probe || a->chooser || !may_stand_for_all(a, t, o) || ar_coll_fused(o->coll)) return 0;
    uint64_t least_ops = 0;
    for (int fine = 0; fine < 2 && !*n; fine++) {
        least_ops = fine ? AR_CASE_EVEN_FINE_OPS : AR_ALGO_ONE_RANK_MIN_OPS;
        for (int k = 0; k < EVEN_STEPS; k++) {
            const uint64_t m = even_step(t, count, dt, o->channels, k < 2, fine, k % 2);
            if (m && count % m && (!*n || steps[*n - 1] != m)) steps[(*n)++] = m;
        }
    }
    if (!*n) return 0;
    const uint64_t ops = count_rank0_ops(t, algo, count, dt, o, buffer);
    return ops && ops >= least_ops / (uint64_t)t->nranks;
}

/* Whether o's plan at count is timed at the even counts around it (AR_CASE_EVEN_SPAN): it is
 * even_eligible, and rank 0's ops do not stand for all at count itself; *lo and *hi, those
 * counts, at the first of its steps where rank 0's ops (or a row's) stand for all at both:
 * by rows first (torus2d on a torus, whose rows' allreduce cuts the rows' blocks unevenly:
 * 8192 elements apart on 64 x 64 at 2 lanes, where the whole grid's step is 524288). */
static int even_counts(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                       ar_mem_t buffer, uint64_t *lo, uint64_t *hi) {
    uint64_t steps[EVEN_STEPS];
    int n;
    if (!even_eligible(t, algo, count, dt, o, buffer, steps, &n) || ar_algo_rank0_stands(algo, t, count, dt, o))
        return 0;
    for (int k = 0; k < n; k++) {
        *lo = count / steps[k] * steps[k];
        *hi = *lo + steps[k];
        if (*lo && ar_algo_rank0_stands(algo, t, *lo, dt, o) && ar_algo_rank0_stands(algo, t, *hi, dt, o)) return 1;
    }
    return 0;
}

/* The predicted time of o's plan (predict_count), at the even counts around count where rank
 * 0's ops do not stand for all at it (AR_CASE_EVEN_SPAN): the count above's time, its plan's
 * ops; where those two are too far apart, not timed (AR_ELIMIT, INFINITY). */
static double predict(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                      ar_mem_t buffer, const ar_backend_ops_t *target, uint64_t max_ops, int *build_rc, uint64_t *nops,
                      uint64_t *nops0, ar_error_t *err) {
    uint64_t lo, hi;
    ar_algo_opts_t at = *o;
    at.buffer = buffer;
    if (!(target && (target->caps & AR_BACKEND_HARDWARE)) && even_counts(t, algo, count, dt, &at, buffer, &lo, &hi)) {
        int rc_hi, rc_lo, r_hi = 0, r_lo = 0;
        uint64_t n_hi, n0_hi, n_lo;
        ar_error_t e;
        ar_error_clear(&e);
        const double s_hi = predict_count(t, algo, hi, dt, o, buffer, target, max_ops, &rc_hi, &n_hi, &n0_hi, &r_hi, &e);
        const double s_lo = r_hi && isfinite(s_hi) ? predict_count(t, algo, lo, dt, o, buffer, target, max_ops, &rc_lo,
                                                                   &n_lo, NULL, &r_lo, &e)
                                                   : INFINITY;
        if (isfinite(s_lo) && r_lo && fabs(s_hi - s_lo) <= AR_CASE_EVEN_SPAN * s_hi) {
            *build_rc = AR_OK;
            *nops = n_hi;
            if (nops0) *nops0 = n0_hi;
            return s_hi;
        }
        /* not timed: every rank's ops, a million or more, would cost seconds a try */
        *build_rc = AR_ELIMIT;
        *nops = 0;
        if (nops0) *nops0 = 0;
        return INFINITY;
    }
    int by_rank0;
    return predict_count(t, algo, count, dt, o, buffer, target, max_ops, build_rc, nops, nops0, &by_rank0, err);
}

/* The vector's bytes rounded up to a power of two, 16 KiB at least: a chunk that leaves
 * every lane one piece, the top of the chunk ladder. */
static uint64_t vector_chunk(uint64_t count, ar_dtype_t dt) {
    uint64_t c = (uint64_t)16 << 10;
    while (c < count * ar_dtype_size(dt)) c *= 2;
    return c;
}

/* The peers an algorithm's lanes take in turn (ar_algo_t.lane_period), where the default
 * channels try counts that load them alike: for a model backend, and where the channels
 * are chosen; else 1 (powers of two only). */
static int even_lanes_period(const ar_algo_t *a, const ar_topo_t *t, int hardware, int chosen) {
    return a->lane_period && !hardware && chosen ? a->lane_period(t) : 1;
}

static int default_chunk(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, ar_mem_t buffer,
                          const ar_backend_ops_t *target, uint64_t first_max_ops, int from_top,
                          ar_algo_opts_t *out, double *predicted_s);

/* Of n counts timed in rising order, the first (the fewest) within AR_CASE_TUNE_FLAT of the
 * least time: a model backend's choice where its time is flat; -1 where none ran. */
static int fewest_within_flat(const double *time, int n) {
    double least = INFINITY;
    for (int i = 0; i < n; i++) least = fmin(least, time[i]);
    for (int i = 0; i < n; i++)
        if (time[i] <= least * (1 + AR_CASE_TUNE_FLAT)) return i;
    return -1;
}

/* fewest_ops_default's lanes at one piece a lane: the ops they may time in all, as a multiple
 * of the first plan's (one lane's), and at most. */
#define FEWEST_RUNS 4
#define FEWEST_MAX_OPS (4 * AR_CASE_TUNE_MAX_OPS)

/* The defaults where the search would time one plan at most (its first, of lo channels, has
 * more than half the ops it may time): lo channels, and the chunk from the ladder of one piece
 * a lane down. Not kept: the search's key is another count's. */
static int fewest_ops_default(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt,
                              const ar_algo_opts_t *o, ar_mem_t buffer, const ar_backend_ops_t *target, int want_time,
                              int lo, ar_algo_opts_t *out, double *predicted_s) {
    out->channels = lo;
    const int hardware = target && (target->caps & AR_BACKEND_HARDWARE);
    const ar_algo_t *a = ar_algo_find(algo);
    /* The channels at one piece a lane, whose plans hold the fewest ops each count can: powers
     * of two from lo, the fewest within AR_CASE_TUNE_FLAT of the least time. A model backend
     * only, as with the search these stand in for; lanes, the count found. */
    int lanes = lo;
    double lo_s = INFINITY, lanes_s = INFINITY; /* each at one piece a lane, where timed */
    if (o->chunk_bytes == 0 && o->channels == 0 && !hardware && a) {
        ar_algo_opts_t k = *o;
        k.chunk_bytes = vector_chunk(count, dt);
        double time[32];
        int chans[32], n = 0;
        uint64_t spent = 0;
        /* Each plan of at most AR_CASE_TUNE_PLAN_OPS ops, AR_CASE_TUNE_MAX_OPS in all. Where
         * even the first, one lane's, is past that cap, it holds the ops the run walks at
         * least: it is timed up to AR_CASE_TUNE_MAX_OPS, and the search may spend FEWEST_RUNS
         * times its ops (FEWEST_MAX_OPS at most), each further count built where it fits what
         * is left. (First at the cap all the same: past it, a plan whose rank 0 stands for
         * every rank is timed as rank 0's.) Otherwise a grid of a thousand devices has its
         * lanes chosen unseen (torus2d on mesh_2d:32x32 at 64 MB: one lane's plan of 381 K
         * ops, 2428 us, where two predict 1250), while a plan of 16384 devices, dear to walk,
         * is searched no further than its first plan allows. */
        uint64_t budget = AR_CASE_TUNE_MAX_OPS, plan_cap = AR_CASE_TUNE_PLAN_OPS;
        int extended = 0;
        for (int ch = lo; ch <= a->max_channels && (uint64_t)ch <= count && n < 32; ch *= 2) {
            int brc;
            uint64_t nops;
            ar_error_t e;
            ar_error_clear(&e);
            k.channels = ch;
            double s = predict(t, algo, count, dt, &k, buffer, target, plan_cap, &brc, &nops, NULL, &e);
            if (n == 0 && !isfinite(s) && (brc == AR_ELIMIT || (brc == AR_OK && nops > plan_cap))) {
                extended = 1;
                ar_error_clear(&e);
                s = predict(t, algo, count, dt, &k, buffer, target, AR_CASE_TUNE_MAX_OPS, &brc, &nops, NULL, &e);
                if (brc == AR_OK && isfinite(s) && FEWEST_RUNS * nops > budget)
                    budget = FEWEST_RUNS * nops < FEWEST_MAX_OPS ? FEWEST_RUNS * nops : FEWEST_MAX_OPS;
            }
            if (brc != AR_OK || !isfinite(s)) break;
            time[n] = s, chans[n++] = ch;
            spent += nops;
            if (extended) plan_cap = budget - spent;
            if (spent + 2 * nops > budget) break; /* more lanes, about twice the ops */
        }
        const int pick = fewest_within_flat(time, n);
        if (pick >= 0) lanes = chans[pick], lanes_s = time[pick], lo_s = time[0];
    }
    /* Nor is the own chunk timed: the chunk ladder from one piece a lane down, each plan of at
     * most AR_CASE_TUNE_PLAN_OPS ops, the least time of those (the own chunk's plan is larger
     * still). One piece a lane is the plan the backend runs fastest, and where the algorithm's
     * steps pipeline the vector already (a ring, a torus's rings) the best there; a tree
     * pipelines only by its pieces (center_root on torus_2d:128x128 at 64 MB: one piece a lane
     * predicts 359 ms, 0.1% of the bound). */
    if (o->chunk_bytes == 0 && o->channels == 0) {
        double s = INFINITY;
        default_chunk(t, algo, count, dt, buffer, target, AR_CASE_TUNE_PLAN_OPS, 1, out, &s);
        /* The ladder's plans all past its cap (the lanes were searched past it, and its first
         * rung is their plan of one piece a lane): that piece, as the lanes timed it. */
        if (!isfinite(s)) out->chunk_bytes = vector_chunk(count, dt), s = lo_s;
        /* The lanes found, each with the ladder too, where they predict less: more lanes gain
         * where one piece a lane already pipelines (2stage on switch:1024 at 64 MB under
         * h200_sxm: 4 channels, 3609 us, where one took 9864), while a tree, pipelined only by
         * its pieces, needs the ladder's smaller chunks, which more lanes hold fewer of under
         * its cap (center_root on torus_2d:64x64 at 64 MB). */
        if (lanes != lo) {
            ar_algo_opts_t alt = *out;
            double alt_s = INFINITY;
            alt.channels = lanes;
            alt.chunk_bytes = 0;
            default_chunk(t, algo, count, dt, buffer, target, AR_CASE_TUNE_PLAN_OPS, 1, &alt, &alt_s);
            if (!isfinite(alt_s)) alt.chunk_bytes = vector_chunk(count, dt), alt_s = lanes_s;
            if (alt_s < s) *out = alt, s = alt_s;
        }
        if (!isfinite(s)) out->chunk_bytes = vector_chunk(count, dt); /* none fit the cap */
        else if (want_time) {
            *predicted_s = s;
            return AR_OK;
        }
    }
    if (want_time) { /* up to the ops the caller would have timed (o->max_ops; 0: any) */
        int brc;
        uint64_t nops;
        ar_error_t e;
        ar_error_clear(&e);
        *predicted_s = predict(t, algo, count, dt, out, buffer, target, o->max_ops, &brc, &nops, NULL, &e);
    }
    return AR_OK;
}

/* count rounded up to whole vectors (AR_VEC_BYTES: the executor's, the model's op_misalign_ns). */
static uint64_t whole_vectors(uint64_t count, ar_dtype_t dt) {
    const uint64_t v = ar_vec_elems(dt);
    return (count + v - 1) / v * v;
}

/* Whether o's plan at `channels`, predicted to take s at count (whole vectors), is bound by
 * its latencies, not its bytes, in the model: half the count (whole vectors too, so that an
 * op's scalar tail, which a count's half may not have, is no part of the difference)
 * predicts no less than AR_CASE_TUNE_HW_GAIN below s. */
static int latency_bound(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                         int channels, double s, ar_mem_t buffer, const ar_backend_ops_t *target) {
    const uint64_t half = whole_vectors(count / 2, dt);
    if (half >= count) return 0;
    ar_algo_opts_t k = *o;
    k.channels = channels;
    int brc;
    uint64_t nops;
    ar_error_t e;
    ar_error_clear(&e);
    const double s_half = predict(t, algo, half, dt, &k, buffer, target, AR_CASE_TUNE_PLAN_OPS, &brc, &nops, NULL, &e);
    return brc == AR_OK && isfinite(s_half) && s_half >= s * (1 - AR_CASE_TUNE_HW_GAIN);
}

/* How default_channels' *fewest says it went: the channels searched at one piece a lane
 * (fewest_ops_default), or to be where that predicts less than the first count alone timed
 * leads to (case_defaults). */
enum { FEWEST_NOT = 0, FEWEST_TAKEN = 1, FEWEST_WEIGHED = 2 };

/* The channels: ar_case_defaults without the chunk. */
static int default_channels(const ar_topo_t *t, const ar_algo_t *a, const char *algo, uint64_t count, ar_dtype_t dt,
                            const ar_algo_opts_t *o, ar_mem_t buffer, const ar_backend_ops_t *target, int want_time,
                            ar_algo_opts_t *out, double *predicted_s, int *fewest, ar_error_t *err) {
    const int hardware = target && (target->caps & AR_BACKEND_HARDWARE);
    /* whether fewest_ops_default, where it is taken, searches the channels (at one piece a lane) */
    const int fewest_searches = !hardware && o->channels == 0 && o->chunk_bytes == 0;
    const uint64_t most = AR_CASE_TUNE_MAX_BYTES / ar_dtype_size(dt);
    tune_key_t key;
    memset(&key, 0, sizeof key); /* compared whole, padding included */
    key.algo = a, key.model = t->model, key.count = count < most ? count : most, key.chunk_bytes = o->chunk_bytes;
    /* On hardware the channels are those of the count's whole 16-byte vectors: an op's
     * scalar tail costs about alike at every count of channels (one H100, 1001 elements
     * against 1008: 0.4-1.4 us more at 1 to 8), while the model's share of it moves its
     * ranking within the error the counts are not ranked by, and an odd count took other
     * channels than its neighbour (2stage, 2 ranks, fp32 at 65537: 64, at 65540: 32,
     * measured 1.11x). */
    if (hardware) key.count = whole_vectors(key.count, dt);
    key.dtype = dt, key.buffer = buffer, key.root = o->root;
    key.grid_w = o->grid_w, key.grid_h = o->grid_h, key.slots = o->slots;
    key.channels = o->channels, key.hardware = hardware, key.coll = o->coll;
    if (tune_find(t, &key, out, predicted_s)) return AR_OK;
    const int lo = o->channels > 0 ? o->channels : 1, hi = o->channels > 0 ? o->channels : a->max_channels;
    int by_rank0 = 0; /* the search times plans of one rank (below) */
    {
        /* a first plan of more than half the ops the search may time is all it would time:
         * the choice is made, and timing it (a whole run of a large plan) would only say how
         * long it takes; a caller that wants the time (auto) gets that of the plan chosen */
        ar_plan_size_t size;
        ar_algo_opts_t k0 = sizing_opts(o, &size, AR_CASE_TUNE_MAX_OPS / 2, buffer);
        k0.channels = lo;
        ar_plan_t *sp = NULL;
        ar_error_t e0;
        ar_error_clear(&e0);
        /* refused before it is counted (more source addresses than a plan may hold) is over too */
        if (ar_algo_build(algo, t, key.count, dt, &k0, &sp, &e0) == AR_ELIMIT) size.over = 1;
        ar_plan_free(sp);
        /* Where rank 0's ops may stand for every rank's, the search times rank 0's plan (and
         * builds four others' to compare): counted so, it may be small enough to search
         * (2stage on switch:64 at 64 MB: 1 channel, 4823 us, where 64 predict 483). */
        if (size.over && may_stand_for_all(a, t, o)) {
            ar_algo_opts_t r0 = *o;
            r0.channels = lo;
            const uint64_t ops0 = count_rank0_ops(t, algo, key.count, dt, &r0, buffer);
            by_rank0 = ops0 > 0 && (AR_ALGO_SYMMETRY_PROBES + 1) * ops0 <= AR_CASE_TUNE_MAX_OPS / 2;
        }
        if (size.over && !by_rank0) {
            *fewest = fewest_searches ? FEWEST_TAKEN : FEWEST_NOT;
            return fewest_ops_default(t, algo, count, dt, o, buffer, target, want_time, lo, out, predicted_s);
        }
    }
    ar_algo_opts_t k = *o;
    if (by_rank0) k.symmetry = AR_SYMMETRY_ON; /* the same times as every rank's, 1/P of the ops */
    double time[32];
    int chans[32], n = 0, brc;
    uint64_t first_ops = 0; /* the first count's plan */
    ar_error_t e;
    /* every count, at the chunk asked or the algorithm's own (or the one asked) */
    uint64_t spent = 0; /* ops of the plans timed so far */
    /* Powers of two, and for a model backend below each the most lanes that load the
     * algorithm's peers alike (2stage on full:8 at 1 GB: 112 lanes, 16 for each of 7 peers,
     * 99% of the bound; 128, two peers with 19 lanes and five with 18, 92%). Not on
     * hardware: such counts split the vector off 16-byte lines, where the GPU's ops take a
     * slower path than the model ranks well (docs/VALIDATION.md, odd counts). */
    int ladder[64], nladder = 0;
    const int period = even_lanes_period(a, t, hardware, lo != hi);
    for (int ch = lo; ch <= hi && nladder < 62; ch *= 2) {
        const int even = ch / period * period;
        if (period > 1 && even > lo && even != ch && (!nladder || even > ladder[nladder - 1])) ladder[nladder++] = even;
        ladder[nladder++] = ch;
    }
    for (int li = 0; li < nladder && (uint64_t)ladder[li] <= key.count && n < 32; li++) {
        const int ch = ladder[li];
        k.channels = ch;
        ar_error_clear(&e);
        uint64_t nops;
        /* the first plan is timed whatever its ops (they are under the search's half, sized
         * above), but not where its far hops make it cost as many (far_hops) */
        const uint64_t cap = ch == lo && !by_rank0 ? AR_CASE_TUNE_MAX_OPS / 2 : AR_CASE_TUNE_PLAN_OPS;
        const double s = predict(t, algo, key.count, dt, &k, buffer, target, cap, &brc, &nops, NULL, &e);
        if ((ch == lo && !by_rank0 && brc == AR_OK && nops > cap) ||
            /* rank 0's ops did not stand for every rank's after all: the plan of fewest ops */
            (by_rank0 && ch == lo && (brc != AR_OK || !isfinite(s)))) {
            *fewest = fewest_searches ? FEWEST_TAKEN : FEWEST_NOT;
            return fewest_ops_default(t, algo, count, dt, o, buffer, target, want_time, lo, out, predicted_s);
        }
        /* the fewest channels not built: neither is any other count (more hold more) */
        if (brc != AR_OK && ch == lo)
            return ar_error_set(err, brc, e.file[0] ? e.file : NULL, e.line, e.column, "%s", e.message);
        if (brc == AR_ELIMIT) break;
        /* it does not run (a buffer too small): its run says why; but past a time asked
         * (k.max_s, auto's twice the best so far) the fewest channels are only too slow, and
         * more may not be (1stage on 2 ranks of one H100 at 256 KB: one channel past 13.7
         * us, 64 take 4.06, where auto had taken 2stage's 6.10) */
        if (ch == lo && !isfinite(s) && !(k.max_s > 0)) break;
        if (!n) first_ops = nops;
        time[n] = s, chans[n++] = ch;
        spent += nops;
        /* more channels, more ops (about twice): stop before the search costs more than
         * AR_CASE_TUNE_MAX_OPS in all */
        if (spent + 2 * nops > AR_CASE_TUNE_MAX_OPS) {
            /* The first count alone timed, at the algorithm's own chunk, leaves nothing to rank:
             * a model backend searches the counts where their plans are smallest instead, one
             * piece a lane, then the chunk (fewest_ops_default), as for a first plan past half
             * the search (torus2d on torus_2d:16x16 at 64 MB: 1 channel's plan of 377 K ops
             * took 2 channels, 1202 us; searched at one piece a lane, 64 channels of 64 KB
             * chunks, 365 us) */
            if (n == 1 && fewest_searches && !by_rank0 && lo < hi)
                *fewest = FEWEST_WEIGHED; /* against what this count leads to (case_defaults) */
            break;
        }
    }
    double least = INFINITY;
    for (int i = 0; i < n; i++) least = fmin(least, time[i]);
    if (!isfinite(least)) return AR_OK; /* none ran (a buffer too small): the algorithm's own, whose run says why */
    /* Within AR_CASE_TUNE_FLAT of the least time the model's time is flat in channels: its
     * links are full, and what more channels still buy is the model's rounding (torus_2d_4x4,
     * 1stage at 8 KB: 4.86 us at 16 channels, 4.83 at 128). For a model backend the fewest
     * channels of that flat: each doubling doubles the ops a simulation runs (the 128 took
     * 17 s in sim, for 0.6%). */
    if (!hardware) {
        const int pick = fewest_within_flat(time, n);
        out->channels = chans[pick], *predicted_s = time[pick];
    } else {
        /* A real device: the model cannot rank counts within its own error
         * (AR_CASE_TUNE_HW_GAIN), and what it leaves out pulls both ways: more channels
         * gain where each runs slower beside many others than alone, where its rates were
         * measured (2 x H100, 1stage at 16 MB: 64.9 us at 128 channels, 70.5 at 64, which
         * the model has 0.2% apart), and cost where every block's flags and launch weigh
         * more than its bytes (4 x H100, 2stage at 1 MB: 26.7 us at 128, 22.6 at 32, which
         * the model has 2% apart the other way). The middle of the counts it cannot rank
         * is at most half their span from the best of them; of two, the one the model has
         * faster (one H100, 2 ranks, 1stage at 2 MB: 64 channels 4.5% faster than 32 in the
         * model, measured 7.53 us against 8.94; so taken, every one of 198 cells of 2, 4 and
         * 8 ranks, 4 KB to 256 MB, within 1.10x of its best count, the lower of two 1.22x). But a
         * count the model has slower than fewer channels, by more than it tells from its
         * rounding (AR_CASE_TUNE_FLAT), is no hedge: there the model already sees what more
         * blocks cost, and the hardware's own share of that cost is larger (one H100, 4
         * ranks, 2stage at 1001 elements: 4 channels, 1.6% slower than 2 in the model,
         * measured 1.14x one channel's time at 1008, where the model ranks more channels
         * 6% slower and one is taken). Nor is there a hedge where the fewest channels are
         * already within the model's error of the least and the plan is bound by its
         * latencies (latency_bound): more channels have no bytes to share there, only blocks
         * to add, whose flags the model has fast at such sizes (one H100, 4 ranks, ring at
         * 1001 elements: 4 channels within 0.4% of one in the model, measured 18.77 us
         * against 17.81). Where bytes cost but the model is flat in channels (naive, bound
         * by the host link), the middle stays: more channels there keep more of the host's
         * reads in flight, which the model does not count (4 ranks at 32 KB: 21.0 us on 4,
         * 23.6 on one). */
        int flat[32], nflat = 0;
        double fewer_least = INFINITY;
        for (int i = 0; i < n; i++) {
            if (time[i] <= least * (1 + AR_CASE_TUNE_HW_GAIN) && time[i] <= fewer_least * (1 + AR_CASE_TUNE_FLAT))
                flat[nflat++] = i;
            fewer_least = fmin(fewer_least, time[i]);
        }
        int mid = nflat == 2 ? (time[flat[1]] < time[flat[0]] ? flat[1] : flat[0]) : flat[(nflat - 1) / 2];
        /* (the first count's time is at key.count, its whole vectors; within a plan's cap as
         * another count's try is) */
        if (flat[0] == 0 && nflat > 1 && first_ops <= AR_CASE_TUNE_PLAN_OPS &&
            latency_bound(t, algo, key.count, dt, &k, chans[0], time[0], buffer, target))
            mid = 0;
        out->channels = chans[mid], *predicted_s = time[mid];
    }
    /* (a search cut short is not this key's, nor one whose count is yet to be weighed) */
    if (!(o->max_s > 0) && *fewest != FEWEST_WEIGHED) tune_keep(t, &key, out, *predicted_s);
    return AR_OK;
}

/* ---- memory: what a case holds at its peak, from its plan's size ---- */

double ar_case_default_max_mem(void) {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? AR_CASE_MAX_MEM_SHARE * (double)pages * (double)page : 0;
}

/* This process's resident bytes: the program, the topology and whatever it holds already. */
static double resident_bytes(void) {
#ifdef __GLIBC__
    malloc_trim(0); /* what earlier plans (the defaults' search) freed is no longer held */
#endif
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
        fclose(f);
    }
    const long page = sysconf(_SC_PAGESIZE);
    return resident > 0 && page > 0 ? (double)resident * (double)page : 0;
}

static double backend_run_bytes(const char *name, const ar_topo_t *t, const ar_plan_size_t *s) {
    const ar_backend_ops_t *b = name ? ar_backend_find(name) : NULL;
    return b && b->run_bytes ? b->run_bytes(t, s) : 0;
}

int ar_case_memory(const ar_case_t *c, const char *algo, const ar_algo_opts_t *o, uint64_t max_ops,
                   ar_case_memory_t *m, ar_error_t *err) {
    memset(m, 0, sizeof *m);
    ar_plan_size_t size;
    ar_algo_opts_t k = sizing_opts(o, &size, max_ops, c->run.buffer);
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    const int rc = ar_algo_build(algo, c->topo, c->count, c->dtype, &k, &p, &e);
    if (p && !p->sizing) { /* an algorithm that builds regardless (a probe): its real size */
        size.ops = p->nops, size.srcs = p->nsrcs, size.nflags = p->nflags, size.flag_slots = ar_plan_flag_slots(p);
        size.nranks = p->nranks, size.nchannels = p->nchannels;
        size.count = p->count, size.scratch_elems = p->scratch_elems, size.host_elems = p->host_elems;
        size.elem_bytes = ar_dtype_size(p->dtype);
        size.bytes = (uint64_t)p->nops * sizeof(ar_op_t) + (uint64_t)p->nsrcs * sizeof(ar_addr_t);
    }
    ar_plan_free(p);
    m->ops = size.ops;
    m->srcs = size.srcs;
    m->over = size.over;
    if (rc != AR_OK && !size.over)
        return ar_error_set(err, rc, e.file[0] ? e.file : NULL, e.line, e.column, "%s", e.message);
    m->held = resident_bytes();
    if (size.over) { /* counted as far as max_ops: its ops alone, as built */
        m->plan = (double)size.ops * sizeof(ar_op_t);
    } else {
        m->plan = (double)size.bytes;
        /* Defaults are found by timing plans on the analytic backend in this process first. */
        const double run = backend_run_bytes(c->backend, c->topo, &size);
        const double tuning = backend_run_bytes("analytic", c->topo, &size);
        m->run = tuning > run ? tuning : run;
    }
    m->bytes = m->held + m->plan + m->run;
    return AR_OK;
}

/* Whether the case may run a plan of one rank: only where it is timed from the model, and
 * nothing asks for every rank's ops (a verification, the traffic of each link). */
static int case_may_stand_for_all(const ar_case_t *c) {
    const ar_backend_ops_t *bo = ar_backend_find(c->backend);
    return bo && (bo->caps & AR_BACKEND_MODEL) && c->verify != 1 && !c->run.breakdown;
}

/* c as its algorithm a runs: on the topology a is timed on (ar_algo_topology), where the
 * case may run a plan of one rank; else on c's own. */
static ar_case_t case_on(const ar_case_t *c, const ar_algo_t *a) {
    ar_case_t on = *c;
    if (a && case_may_stand_for_all(c)) on.topo = ar_algo_topology(a, c->topo, &c->algo_opts);
    return on;
}

/* What lowers an estimate most, the options that shrink its largest part: a plan's ops grow
 * with its chunks (chunk: a larger --chunk may help), channels (not at one already) and ranks;
 * a run's state with the ranks and channels, the sim backend's most (an actor and a stack per
 * channel); both are about 1/P as large where rank 0's ops may stand for all (by_rank0); arsim's
 * own only a larger --max-mem holds. */
static const char *memory_remedy(const ar_case_memory_t *m, int chunk, int one_channel, int by_rank0, int sim) {
    if (by_rank0 && (m->over || m->plan + m->run > m->held))
        return "--symmetry auto (rank 0's ops for all), fewer --ranks, or a larger --max-mem";
    if (m->over || (m->plan >= m->run && m->plan >= m->held))
        return chunk    ? "a larger --chunk, fewer --channels or --ranks, or a larger --max-mem"
               : one_channel ? "fewer --ranks, or a larger --max-mem"
                             : "fewer --channels or --ranks, or a larger --max-mem";
    if (m->run < m->held) return "a larger --max-mem";
    if (sim)
        return one_channel ? "fewer --ranks, --backend analytic, or a larger --max-mem"
                           : "fewer --ranks or --channels, --backend analytic, or a larger --max-mem";
    return one_channel ? "fewer --ranks, or a larger --max-mem" : "fewer --ranks or --channels, or a larger --max-mem";
}

/* AR_OK when the case with these options fits c->max_mem (or there is none), else AR_ELIMIT
 * with the estimate and what lowers it. floor: the options are the fewest ops the defaults
 * could choose (check_memory_floor), so the estimate is the least the case needs. */
static int check_memory_at(const ar_case_t *c, const char *algo, const ar_algo_opts_t *o, const char *floor,
                           ar_error_t *err) {
    if (c->max_mem <= 0) return AR_OK;
    /* every op holds at least its own record: past this many, the plan alone is too large */
    const double room = c->max_mem - resident_bytes();
    char need[32], have[32], ops[32];
    ar_bytes_human(c->max_mem, have, sizeof have);
    if (room <= 0) {
        ar_bytes_human(resident_bytes(), need, sizeof need);
        return AR_ERR(err, AR_ELIMIT, "arsim holds %s already, over --max-mem %s: a larger --max-mem", need, have);
    }
    const uint64_t max_ops = (uint64_t)(room / sizeof(ar_op_t)) + 1;
    ar_case_memory_t m;
    AR_TRY(ar_case_memory(c, algo, o, max_ops, &m, err));
    if (!m.over && m.bytes <= c->max_mem) return AR_OK;
    char plan[32], run[32], held[32];
    ar_bytes_human(m.bytes, need, sizeof need);
    ar_count_format((double)m.ops, ops, sizeof ops);
    ar_bytes_human(m.plan, plan, sizeof plan);
    ar_bytes_human(m.run, run, sizeof run);
    ar_bytes_human(m.held, held, sizeof held);
    const char *backend = c->backend ? c->backend : "analytic";
    /* every rank's ops asked for where rank 0's may stand for them: 1/P of the plan */
    const ar_algo_t *a = ar_algo_find(algo);
    const int by_rank0 = o->symmetry == AR_SYMMETRY_OFF && c->algo_opts.symmetry == AR_SYMMETRY_OFF &&
                         case_may_stand_for_all(c) && a && a->one_rank && ar_topo_translatable(c->topo, 0);
    const int one_chunk = o->chunk_bytes >= c->count * ar_dtype_size(c->dtype);
    const char *remedy = memory_remedy(&m, !one_chunk, o->channels == 1, by_rank0, strcmp(backend, "sim") == 0);
    if (m.over)
        return AR_ERR(err, AR_ELIMIT,
                      "needs more than %s (over %s plan ops on %d ranks, %s%s; their records alone), over --max-mem "
                      "%s: %s",
                      need, ops, c->topo->nranks, backend, floor ? floor : "", have, remedy);
    return AR_ERR(err, AR_ELIMIT,
                  "needs %s %s (%s plan ops on %d ranks, %s%s; plan %s, %s's state %s, arsim %s), over --max-mem %s: %s",
                  floor ? "at least" : "about", need, ops, c->topo->nranks, backend, floor ? floor : "", plan, backend,
                  run, held, have, remedy);
}

static int check_memory(const ar_case_t *c, const char *algo, const ar_algo_opts_t *o, ar_error_t *err) {
    return check_memory_at(c, algo, o, NULL, err);
}

/* check_memory at the count c is timed at: the even count above where it is timed at the even
 * counts around its own (AR_CASE_EVEN_SPAN, plan_even). */
static int check_memory_as_timed(const ar_case_t *c, const char *algo, const ar_algo_opts_t *o, ar_error_t *err) {
    uint64_t lo;
    ar_case_t at = *c;
    if (!case_may_stand_for_all(c) || !even_counts(c->topo, algo, c->count, c->dtype, o, c->run.buffer, &lo, &at.count))
        return check_memory(c, algo, o, err);
    return check_memory(&at, algo, o, err);
}

/* Before the defaults' search, which builds and times plans (seconds at 16384 ranks): the
 * plan of fewest ops it could choose, one channel and one chunk, over c->max_mem already is
 * refused now. Where that plan cannot be built, the search says why. */
static int check_memory_floor(const ar_case_t *c, const ar_algo_opts_t *o, ar_error_t *err) {
    if (c->max_mem <= 0 || (o->channels > 0 && o->chunk_bytes > 0)) return AR_OK; /* nothing to choose */
    ar_algo_opts_t k = *o;
    const char *fewest = o->channels > 0 ? ", at its fewest: one chunk"
                         : o->chunk_bytes > 0 ? ", at its fewest: one channel"
                                              : ", at its fewest: one channel, one chunk";
    if (k.channels <= 0) k.channels = 1;
    if (k.chunk_bytes == 0) k.chunk_bytes = c->count * ar_dtype_size(c->dtype);
    k.buffer = c->run.buffer;
    if (!case_may_stand_for_all(c)) k.symmetry = AR_SYMMETRY_OFF; /* as ar_case_plan builds it */
    ar_error_t e;
    ar_error_clear(&e);
    const int rc = check_memory_at(c, c->algo, &k, fewest, &e);
    if (rc == AR_ELIMIT) {
        if (err) *err = e;
        return rc;
    }
    return AR_OK;
}

/* Whether rank 0's ops alone in o's plan, counted (not built), hold at most max_work ops and
 * source addresses. */
static int rank0_within(const ar_case_t *on, const char *algo, const ar_algo_opts_t *o, uint64_t max_work) {
    ar_plan_size_t size;
    ar_algo_opts_t k = sizing_opts(o, &size, max_work, on->run.buffer);
    k.symmetry = AR_SYMMETRY_OFF;
    k.one_rank = 1;
    ar_plan_t *p = NULL;
    ar_error_t e;
    ar_error_clear(&e);
    const int rc = ar_algo_build(algo, on->topo, on->count, on->dtype, &k, &p, &e);
    ar_plan_free(p);
    ar_plan_size_free(&size);
    return rc == AR_OK && !size.over && size.ops + size.srcs <= max_work;
}

/* An algorithm auto's search did not time (its plan at its defaults holds more than the
 * search's AR_CASE_TUNE_MAX_OPS ops, every rank's), timed whole where it might beat best.
 * First what one rank's cost says: its buffers fit, and the links rank 0's ops alone load
 * (every other rank's only add) take less than best. Then the plan, up to
 * AR_CASE_CHOOSE_MAX_OPS ops and sources and the memory allowed, whose links alone must not
 * take longer either. An algorithm that cannot build rank 0's ops alone has no such floor
 * (mesh2d: P^2 ops built to find one) and is not timed. INFINITY where it cannot win or is not
 * timed (one the search timed: its time was its own). Where it ran, *ran its result (else
 * zeroed; the caller's to free) and *ran_ops its plan's ops. */
static double time_untimed(const ar_case_t *on, const ar_algo_t *a, const ar_algo_opts_t *o, double best, ar_result_t *ran,
                           uint32_t *ran_ops, int *too_large) {
    memset(ran, 0, sizeof *ran);
    *too_large = 0;
    ar_error_t e;
    ar_error_clear(&e);
    if (!a->one_rank || check_capacity(on->topo, a->name, on->count, on->dtype, o, on->run.buffer, &e) != AR_OK ||
        !rank0_within(on, a->name, o, AR_CASE_TUNE_MAX_OPS))
        return INFINITY;
    /* the whole plan, counted once: its size, and the memory it would take (--max-mem); first,
     * as a plan past them is refused at once (2stage on ring_1d:16384, every rank's 1.6 G ops)
     * where rank 0's floor walks each op's route (its 98299 ops, 3 s) */
    const uint64_t most = o->max_ops && o->max_ops < AR_CASE_CHOOSE_MAX_OPS ? o->max_ops : AR_CASE_CHOOSE_MAX_OPS;
    ar_case_memory_t m;
    if (ar_case_memory(on, a->name, o, most, &m, &e) != AR_OK) {
        *too_large = e.code == AR_ELIMIT; /* past a plan's most (its sources) */
        return INFINITY;
    }
    *too_large = m.over || m.ops + m.srcs > most || (on->max_mem > 0 && m.bytes > on->max_mem);
    if (*too_large || m.ops <= AR_CASE_TUNE_MAX_OPS) return INFINITY;
    ar_algo_opts_t k = *o;
    k.buffer = on->run.buffer;
    k.symmetry = AR_SYMMETRY_OFF;
    k.one_rank = 1;
    ar_plan_t *p = NULL;
    const int rc = ar_algo_build(a->name, on->topo, on->count, on->dtype, &k, &p, &e);
    const double floor = rc == AR_OK ? ar_bound_own_floor(on->topo, p, on->run.buffer, best) : INFINITY;
    ar_plan_free(p);
    if (!(floor < best)) return INFINITY;
    k = *o;
    k.buffer = on->run.buffer;
    k.max_ops = most;
    p = NULL;
    if (ar_algo_build(a->name, on->topo, on->count, on->dtype, &k, &p, &e) != AR_OK) {
        ar_plan_free(p);
        return INFINITY;
    }
    /* the run of such a plan takes seconds: its progress shows, as the case's own will */
    *ran_ops = p->nops;
    return time_plan_kept(on->topo, p, best, on->run.buffer, ar_backend_find(on->backend), &on->run, ran, &e);
}

/* What auto's choice ran of the algorithm it chose: the whole plan's result on the analytic
 * backend, where it was timed whole (time_untimed); held 0 otherwise. */
typedef struct chosen_run_s {
    int held;
    uint32_t nops; /* the plan's ops */
    ar_result_t res;
    char too_large[sizeof ((ar_case_out_t *)0)->auto_untimed]; /* ar_case_out_t.auto_untimed */
} chosen_run_t;

/* On hardware, the candidates within the model's own error (AR_CASE_TUNE_HW_GAIN) of the
 * least predicted time, which it cannot rank: each run on the backend (AR_CASE_HW_TUNE_ITERS
 * timed executions after one warm-up, the median), and the fastest measured taken. n: the
 * candidates, each fitting, with its options and predicted time; the index of the one taken
 * (best, where no other is within the gain or none could run). */
static int measured_pick(const ar_case_t *c, const char *const *names, const ar_algo_opts_t *opts, const double *pred,
                         int n, int best) {
    const double band = pred[best] * (1 + AR_CASE_TUNE_HW_GAIN);
    int pick = best, within = 0;
    double fastest = INFINITY;
    for (int i = 0; i < n; i++) within += pred[i] <= band;
    if (within < 2) return best;
    ar_run_opts_t ro = c->run;
    ro.iters = AR_CASE_HW_TUNE_ITERS, ro.warmup = 1, ro.check = 0, ro.breakdown = 0, ro.timeline = NULL;
    ro.progress = NULL;
    for (int i = 0; i < n; i++) {
        if (!(pred[i] <= band)) continue;
        ar_plan_t *p = NULL;
        ar_error_t e;
        ar_error_clear(&e);
        ar_result_t r;
        memset(&r, 0, sizeof r);
        if (ar_algo_build(names[i], c->topo, c->count, c->dtype, &opts[i], &p, &e) == AR_OK &&
            ar_backend_run(c->backend, c->topo, p, &ro, &r, &e) == AR_OK && r.time_s < fastest)
            fastest = r.time_s, pick = i;
        ar_result_free(&r);
        ar_plan_free(p);
    }
    return pick;
}

static int choose(const ar_case_t *c, const char **algo, ar_algo_opts_t *opts, chosen_run_t *kept, ar_error_t *err) {
    double best = INFINITY;
    kept->held = 0;
    kept->too_large[0] = 0;
    const ar_backend_ops_t *target = ar_backend_find(c->backend);
    const int hardware = target && (target->caps & AR_BACKEND_HARDWARE);
    /* on hardware, every candidate that fits: those the model cannot rank are measured */
    enum { FIT_MOST = 32 };
    const char *fit[FIT_MOST];
    ar_algo_opts_t fit_o[FIT_MOST];
    double fit_s[FIT_MOST];
    int nfit = 0;
    ar_error_t too_large;
    ar_error_clear(&too_large);
    /* those the search gave no time: each with the options its defaults chose (room for more
     * than the registry holds) */
    enum { UNTIMED_MOST = 32 };
    const ar_algo_t *untimed[UNTIMED_MOST];
    ar_algo_opts_t untimed_o[UNTIMED_MOST];
    int nuntimed = 0;
    /* First the algorithms whose plan the search can time in AR_CASE_TUNE_MAX_OPS ops: one
     * of more is timed whole, where its ops and their routes can cost minutes (torus2d laid
     * over ring_1d:16384, every rank's 12 M ops, each column's step 128 hops). Where none
     * fits, the others. */
    for (int pass = 0; pass < 2 && !isfinite(best); pass++)
        for (const ar_algo_t *const *a = ar_algo_all(); *a; a++) {
            if (c->algo_opts.root >= 0 && !(*a)->takes_root) continue; /* a root asked: only a tree has one */
            if (!ar_algo_computes(*a, c->algo_opts.coll)) continue;
            ar_algo_opts_t in = c->algo_opts, o;
            if (pass == 0 && (!in.max_ops || in.max_ops > AR_CASE_TUNE_MAX_OPS)) in.max_ops = AR_CASE_TUNE_MAX_OPS;
            /* a plan whose links alone take twice the best found so far cannot win, nor be
             * what its search would pick where it could (its gains for fewer ops or lanes are
             * a few percent): not timed (a star of 16383 children on switch:16384, seconds
             * to time, 51 ms at 1 MB against torus2d's 1.9) */
            if (isfinite(best)) in.max_s = 2 * best;
            double s;
            ar_error_t e;
            ar_error_clear(&e);
            /* as for a named algorithm (ar_case_plan): its defaults, whose search times no plan of
             * more than AR_CASE_TUNE_MAX_OPS / 2 ops at the channels' count, then the plan they
             * choose, which over the memory allowed is left out */
            const ar_case_t on = case_on(c, *a);
            if (ar_case_defaults(on.topo, (*a)->name, c->count, c->dtype, &in, c->run.buffer, c->backend, &o, &s,
                                 &e) != AR_OK)
                continue; /* it does not fit */
            o.max_ops = c->algo_opts.max_ops;
            o.max_s = c->algo_opts.max_s;
            if (pass == 0 && !isfinite(s) && nuntimed < UNTIMED_MOST) untimed[nuntimed] = *a, untimed_o[nuntimed++] = o;
            if (!(s < best) && !(hardware && isfinite(s))) continue;
            ar_error_clear(&e);
            if (check_memory_as_timed(&on, (*a)->name, &o, &e) != AR_OK) {
                if (e.code == AR_ELIMIT) too_large = e; /* said when nothing else fits */
                continue;
            }
            if (hardware && nfit < FIT_MOST) fit[nfit] = (*a)->name, fit_o[nfit] = o, fit_s[nfit++] = s;
            if (s < best) best = s, *algo = (*a)->name, *opts = o;
        }
    if (hardware && nfit > 1) {
        int at = 0;
        for (int i = 1; i < nfit; i++)
            if (fit_s[i] < fit_s[at]) at = i;
        at = measured_pick(c, fit, fit_o, fit_s, nfit, at);
        *algo = fit[at], *opts = fit_o[at];
    }
    /* Past the search's ops is no reason to lose: torus2d on mesh_2d:64x64 at 1 MB predicts
     * 192 us where center_root, the best the search timed, takes 424 (a mesh has no
     * translations, so every rank's ops are timed: 3 M of them) */
    for (int i = 0; i < nuntimed && isfinite(best); i++) {
        if (!strcmp(untimed[i]->name, *algo)) continue;
        const ar_case_t on = case_on(c, untimed[i]);
        ar_result_t ran;
        uint32_t ran_ops = 0;
        int too_large_i;
        const double s = time_untimed(&on, untimed[i], &untimed_o[i], best, &ran, &ran_ops, &too_large_i);
        if (too_large_i) {
            const size_t at = strlen(kept->too_large);
            snprintf(kept->too_large + at, sizeof kept->too_large - at, "%s%s", at ? ", " : "", untimed[i]->name);
        }
        if (s < best) {
            best = s, *algo = untimed[i]->name, *opts = untimed_o[i];
            if (kept->held) ar_result_free(&kept->res);
            kept->held = 1, kept->nops = ran_ops, kept->res = ran;
        } else {
            ar_result_free(&ran);
        }
    }
    if (!isfinite(best)) {
        if (too_large.code == AR_ELIMIT) { /* the memory of the last one left out */
            if (err) *err = too_large;
            return AR_ELIMIT;
        }
        return AR_ERR(err, AR_EUNFIT, "auto: no algorithm fits %s (arsim list algos; each says why with --algo all)",
                      c->topo->name);
    }
    return AR_OK;
}

int ar_case_choose(const ar_case_t *c, const char **algo, ar_algo_opts_t *opts, ar_error_t *err) {
    chosen_run_t kept;
    const int rc = choose(c, algo, opts, &kept, err);
    if (kept.held) ar_result_free(&kept.res);
    return rc;
}

/* ar_case_defaults; capacity_checked: the caller found the buffers fit (check_capacity with
 * these very arguments), and they are not counted again. */
static int case_defaults(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                         ar_mem_t buffer, const char *backend, int capacity_checked, ar_algo_opts_t *out,
                         double *predicted_s, int *fewest, ar_error_t *err);

/* The case's plan with these options, its memory checked first (--max-mem). */
static int build_checked(const ar_case_t *c, const ar_algo_t *a, const char *algo, const ar_algo_opts_t *o,
                         ar_plan_t **plan, ar_error_t *err) {
    if (a && !a->probe) AR_TRY(check_memory(c, algo, o, err));
    return ar_algo_build(algo, c->topo, c->count, c->dtype, o, plan, err);
}

/* The plan of c at count, rank 0's for all: NULL where it does not stand (or cannot be built). */
static ar_plan_t *rank0_plan_at(const ar_case_t *c, const ar_algo_t *a, const char *algo, const ar_algo_opts_t *o,
                                uint64_t count, ar_error_t *err) {
    ar_case_t at = *c;
    at.count = count;
    ar_algo_opts_t k = *o;
    k.symmetry = AR_SYMMETRY_ON;
    ar_plan_t *p = NULL;
    if (build_checked(&at, a, algo, &k, &p, err) != AR_OK || p->only_rank < 0) {
        ar_plan_free(p);
        return NULL;
    }
    return p;
}

/* c timed at the even counts around its own (AR_CASE_EVEN_SPAN) with options o: AR_OK with the
 * count above's plan and result in out (out->ran); AR_EUNFIT where it is not to be, the plans'
 * times too far apart or either not rank 0's for all (the case's own count is then planned);
 * a limit of the count above's plan (--max-mem) as it is. */
static int plan_even(const ar_case_t *c, const ar_algo_t *a, const char *algo, const ar_algo_opts_t *o,
                     ar_case_out_t *out, ar_error_t *err) {
    uint64_t lo, hi;
    if (!even_counts(c->topo, algo, c->count, c->dtype, o, c->run.buffer, &lo, &hi)) return AR_EUNFIT;
    ar_error_t e;
    ar_error_clear(&e);
    ar_plan_t *p_lo = NULL, *p_hi = rank0_plan_at(c, a, algo, o, hi, &e);
    if (!p_hi && e.code == AR_ELIMIT) {
        if (err) *err = e;
        return AR_ELIMIT;
    }
    if (p_hi) p_lo = rank0_plan_at(c, a, algo, o, lo, &e);
    ar_result_t r_lo;
    memset(&r_lo, 0, sizeof r_lo);
    int rc = p_lo ? ar_backend_run(c->backend, c->topo, p_lo, &c->run, &r_lo, &e) : AR_EUNFIT;
    if (rc == AR_OK) rc = ar_backend_run(c->backend, c->topo, p_hi, &c->run, &out->res, &e);
    if (rc == AR_OK && fabs(out->res.time_s - r_lo.time_s) <= AR_CASE_EVEN_SPAN * out->res.time_s) {
        out->plan = p_hi;
        out->even_hi = hi;
        out->even_lo = lo;
        out->even_lo_s = r_lo.time_s;
        out->ran = 1;
        ar_plan_free(p_lo);
        ar_result_free(&r_lo);
        return AR_OK;
    }
    ar_result_free(&out->res);
    memset(&out->res, 0, sizeof out->res);
    ar_result_free(&r_lo);
    ar_plan_free(p_lo);
    ar_plan_free(p_hi);
    return AR_EUNFIT;
}

int ar_case_plan(const ar_case_t *c, ar_case_out_t *out, ar_error_t *err) {
    memset(out, 0, sizeof *out);
    out->stage = AR_CASE_BUILD;
    const ar_algo_t *a = ar_algo_find(c->algo);
    ar_algo_opts_t opts = c->algo_opts;
    const char *algo = c->algo;
    const int chosen = a && a->chooser; /* its options are the chooser's */
    chosen_run_t kept = {0};
    if (chosen) {
        AR_TRY(choose(c, &algo, &opts, &kept, err));
        snprintf(out->algo_label, sizeof out->algo_label, "auto:%s/%d", algo, opts.channels);
        snprintf(out->auto_untimed, sizeof out->auto_untimed, "%s", kept.too_large);
        a = ar_algo_find(algo);
    }
    /* from here on, the case on the topology its algorithm is timed on; the row's bound is
     * the given topology's */
    const ar_topo_t *given = c->topo;
    const ar_case_t on = case_on(c, a);
    c = &on;
    out->topo = c->topo;
    if (!chosen && !c->own_defaults) {
        /* buffers the model's memory cannot hold, where the model's memory is what runs (a
         * timing backend checks it: ar_cost_check_capacity): said before any plan is built */
        const ar_backend_ops_t *b = ar_backend_find(c->backend);
        const int checked = a && !a->probe && !a->chooser && c->topo->model && b && (b->caps & AR_BACKEND_MODEL);
        if (checked && check_capacity(c->topo, c->algo, c->count, c->dtype, &c->algo_opts, c->run.buffer, err) != AR_OK) {
            out->stage = AR_CASE_RUN; /* the run's refusal (ar_cost_check_capacity), said first */
            return AR_ELIMIT;
        }
        /* (a count timed at the even counts around it is checked at the count above) */
        uint64_t steps[EVEN_STEPS];
        int nsteps;
        if (a && !a->probe &&
            !even_eligible(c->topo, c->algo, c->count, c->dtype, &c->algo_opts, c->run.buffer, steps, &nsteps))
            AR_TRY(check_memory_floor(c, &c->algo_opts, err));
        /* (the defaults time no plan of more than AR_CASE_TUNE_MAX_OPS / 2 ops here: the plan
         * chosen is the one to check; the buffers, counted above, are not counted again) */
        AR_TRY(case_defaults(c->topo, c->algo, c->count, c->dtype, &c->algo_opts, c->run.buffer, c->backend, checked,
                             &opts, NULL, &out->defaults_fewest, err));
    }
    opts.buffer = c->run.buffer;
    if (!case_may_stand_for_all(c)) opts.symmetry = AR_SYMMETRY_OFF;
    const int even = plan_even(c, a, algo, &opts, out, err);
    if (even != AR_EUNFIT && even != AR_OK) {
        if (kept.held) ar_result_free(&kept.res);
        return even;
    }
    int brc = even == AR_OK ? AR_OK : build_checked(c, a, algo, &opts, &out->plan, err);
    /* The choice timed this very plan whole, every rank's ops, on the backend that would run
     * it again: its result is the run's, as long as the run is asked for nothing more */
    if (kept.held && brc == AR_OK && !out->ran && out->plan->only_rank < 0 && out->plan->nops == kept.nops &&
        !strcmp(c->backend, "analytic") && !c->run.breakdown) {
        out->res = kept.res;
        out->ran = 1;
        kept.held = 0;
    }
    if (kept.held) ar_result_free(&kept.res);
    /* The defaults' plan over a plan's limits or --max-mem (the search timed rank 0's ops,
     * which did not stand for every rank's at this chunk): one piece a lane, the fewest ops
     * at these channels, then at one channel. */
    for (int tries = 0; brc == AR_ELIMIT && a && !a->probe && c->algo_opts.chunk_bytes == 0 && tries < 2; tries++) {
        if (tries == 1 && c->algo_opts.channels > 0) break;
        if (tries == 1) opts.channels = 1;
        opts.chunk_bytes = vector_chunk(c->count, c->dtype);
        ar_error_clear(err);
        brc = build_checked(c, a, algo, &opts, &out->plan, err);
    }
    if (brc != AR_OK) return brc;
    const ar_plan_t *p = out->plan;
    out->stage = AR_CASE_VERIFY;
    const int cheap = (uint64_t)p->nops * (uint64_t)p->nranks * (uint64_t)p->nchannels <= AR_CASE_VERIFY_MAX_WORK;
    /* a probe computes no allreduce: nothing to verify it against */
    if (a && !a->probe && p->only_rank < 0 && (c->verify == 1 || (c->verify == -1 && cheap))) {
        ar_error_t v;
        ar_error_clear(&v);
        const int vrc = ar_plan_verify(p, &v);
        /* too large to verify is no fault of the plan's: a limit, with the way past it */
        if (vrc == AR_ELIMIT)
            return ar_error_set(err, AR_ELIMIT, NULL, 0, 0, "%s (--no-verify runs it unverified)", v.message);
        if (vrc != AR_OK)
            return ar_error_set(err, AR_EPLAN, v.file[0] ? v.file : NULL, v.line, v.column,
                                "plan failed verification: %s", v.message);
    }
    out->stage = AR_CASE_RUN;
    const ar_topo_t *t = given;
    out->row = (ar_row_t){
        .backend = c->backend, .topology = c->topology, .model = t->model ? t->model->name : "",
        .algo = out->algo_label[0] ? out->algo_label : c->algo, .nranks = p->nranks, .dtype = c->dtype, .buffer = c->run.buffer,
        .bytes = c->count * ar_dtype_size(c->dtype), .count = c->count, .root = p->root,
        /* a fused plan's compute channel is the product's, not one of the algorithm's */
        .channels = ar_coll_fused(p->coll) ? p->nchannels - 1 : p->nchannels, .chunk_bytes = ar_plan_chunk_bytes(p),
        .res = &out->res, .check = "", .coll = p->coll, .gemm = p->gemm, .partitions = p->partitions,
    };
    ar_bound_t b;
    ar_error_t berr;
    ar_error_clear(&berr);
    if (ar_bound_fused(t, p->coll, p->gemm, p->dtype, out->row.bytes, c->run.buffer, p->host_elems > 0, &b, &berr) == AR_OK)
        out->row.bound_s = b.time_s;
    return AR_OK;
}

void ar_row_gemm(const ar_row_t *r, char *buf, size_t len) {
    if (!ar_coll_fused(r->coll) || !r->gemm.m) {
        if (len) buf[0] = 0;
        return;
    }
    snprintf(buf, len, "%" PRIu64 "x%" PRIu64 "x%" PRIu64 "/%d", r->gemm.m, r->gemm.n, r->gemm.k, r->partitions);
}

const char *ar_row_redop(const ar_row_t *r) { return r->coll == AR_COLL_ALLGATHER ? "none" : "sum"; }

double ar_row_efficiency(const ar_row_t *r) {
    const double t = r->res ? r->res->time_s : 0;
    return t > 0 && r->bound_s > 0 ? r->bound_s / t : NAN;
}

int ar_case_execute(const ar_case_t *c, ar_case_out_t *out, ar_error_t *err) {
    if (!out->ran) AR_TRY(ar_backend_run(c->backend, out->topo ? out->topo : c->topo, out->plan, &c->run, &out->res, err));
    if (out->res.checked) out->row.check = out->res.check_ok ? "ok" : "FAIL";
    out->stage = AR_CASE_DONE;
    return AR_OK;
}

int ar_case_run(const ar_case_t *c, ar_case_out_t *out, ar_error_t *err) {
    AR_TRY(ar_case_plan(c, out, err));
    return ar_case_execute(c, out, err);
}

void ar_case_out_free(ar_case_out_t *out) {
    ar_result_free(&out->res);
    ar_plan_free(out->plan);
    out->plan = NULL;
}

/* The chunk, once the channels are chosen: the algorithm's own, and --chunk at powers of
 * four from 16 MiB down to 16 KiB, each timed at the case's count, largest first, stopping
 * before a plan would hold more than AR_CASE_TUNE_PLAN_OPS ops (smaller chunks, more ops).
 * Pipelining trades each op's fixed costs, which fewer larger chunks pay less often,
 * against the pipeline's filling, which smaller chunks shorten; where the balance lies
 * depends on the model's latencies and rates, the topology's steps and the size. For a
 * model backend the plan of fewest ops within AR_CASE_TUNE_CHUNK_FLAT of the least time (the own
 * chunk first among equals), as with the channels; for hardware the own chunk, which is what
 * was measured, unless one of no more ops predicts AR_CASE_TUNE_HW_GAIN less. The own chunk's
 * plan is timed whatever it holds where first_max_ops is 0, else only up to that many ops
 * (past them the ladder alone). from_top: the ladder without the own chunk, from one piece a
 * lane (the vector's bytes) down. */
static int default_chunk(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, ar_mem_t buffer,
                          const ar_backend_ops_t *target, uint64_t first_max_ops, int from_top,
                          ar_algo_opts_t *out, double *predicted_s) {
    const int hardware = target && (target->caps & AR_BACKEND_HARDWARE);
    enum { NCAND = 8 };
    ar_algo_opts_t k = *out;
    ar_error_t e;
    int brc, n = 0;
    uint64_t chunk[NCAND], nops[NCAND], nops0[NCAND];
    double time[NCAND], least = INFINITY;
    /* The ladder: the own chunk first, then the vector's bytes (to a power of two) over
     * powers of four: the same pipeline shapes (pieces a lane) at every size, so a shape
     * that wins at one size is there to win at twice it, and time grows smoothly with size
     * where fixed chunks would change the shape under it. A rung whose plan counts the ops
     * of the one before it is the same plan (one piece a lane): not timed again; on hardware
     * neither are the rungs of more ops than the own chunk's, which it never takes (below). */
    const uint64_t top = vector_chunk(count, dt);
    for (uint64_t c = top, rung = 0; c >= (uint64_t)16 << 10 && n < NCAND; c /= 4, rung++) {
        k.chunk_bytes = rung || from_top ? c : 0;
        uint64_t cap = first_max_ops;
        if (n > 0) {
            const uint64_t ops0 = count_rank0_ops(t, algo, count, dt, &k, buffer);
            if (ops0 == nops0[n - 1]) continue;
            if (hardware && ops0 > nops0[0]) break; /* the rungs below have more still */
            /* a rung whose rank 0 holds no more ops than the first plan's is no dearer to time
             * than that plan was (a row's ops standing for all: 128 ranks' on 128 x 128) */
            cap = ops0 <= nops0[0] && nops[0] > AR_CASE_TUNE_PLAN_OPS ? nops[0] : AR_CASE_TUNE_PLAN_OPS;
        }
        ar_error_clear(&e);
        time[n] = predict(t, algo, count, dt, &k, buffer, target, cap, &brc, &nops[n], &nops0[n], &e);
        chunk[n] = k.chunk_bytes;
        if (!isfinite(time[n]) && n == 0 && !from_top && !k.chunk_bytes && first_max_ops &&
            (brc == AR_ELIMIT || (brc == AR_OK && nops[0] > first_max_ops))) {
            /* the own chunk's plan past what may be timed: the ladder from one piece a lane */
            from_top = 1;
            c = top * 4, rung = UINT64_MAX; /* the loop's step takes them to top and 0 */
            continue;
        }
        if (!isfinite(time[n])) break;
        least = fmin(least, time[n]);
        /* down the ladder each chunk a quarter, about four times the ops */
        if (n++ > 0 && 4 * nops[n - 1] > AR_CASE_TUNE_PLAN_OPS) break;
    }
    if (!n) return 0;
    /* Where the op cap stops the ladder, the smallest power of two it admits, found from the
     * last plan's ops (ops go as 1/chunk): doubling with the size, so the pipeline keeps its
     * depth as sizes grow, where the ladder's next rung, four times the ops, would leave a
     * quarter of it, a step in time. */
    const uint64_t last = chunk[n - 1];
    if (n < NCAND && last > (uint64_t)16 << 10 && 4 * nops[n - 1] > AR_CASE_TUNE_PLAN_OPS) {
        uint64_t c = (uint64_t)16 << 10;
        while (c < last && (double)c * AR_CASE_TUNE_PLAN_OPS < (double)last * nops[n - 1]) c *= 2;
        if (c < last) {
            k.chunk_bytes = c;
            ar_error_clear(&e);
            time[n] = predict(t, algo, count, dt, &k, buffer, target, AR_CASE_TUNE_PLAN_OPS, &brc, &nops[n],
                              &nops0[n], &e);
            chunk[n] = c;
            if (isfinite(time[n])) least = fmin(least, time[n]), n++;
        }
    }
    int pick = 0;
    if (hardware) {
        /* Of the plans with no more ops than the own one: each further op costs the GPU more
         * than the model knows, so it ranks smaller chunks too well (2 x H200, ring at 512 MB:
         * 32 KB chunks predicted 5.8% faster than its own 512 KB, measured 17% slower; 4 x
         * H100, 2stage at 16 MB: 16 KB predicted 1.9% faster, measured 17% slower), while the
         * larger chunks it prefers gain (ring at 4 and 16 MB: 21-24% faster than its own). */
        for (int i = 1; i < n; i++)
            if (nops[i] <= nops[0] && time[i] < time[pick]) pick = i;
        if (time[pick] >= time[0] * (1 - AR_CASE_TUNE_HW_GAIN)) pick = 0;
    } else {
        for (int i = 1; i < n; i++)
            if (time[i] <= least * (1 + AR_CASE_TUNE_CHUNK_FLAT) &&
                (time[pick] > least * (1 + AR_CASE_TUNE_CHUNK_FLAT) || nops[i] < nops[pick]))
                pick = i;
    }
    out->chunk_bytes = chunk[pick];
    *predicted_s = time[pick];
    return n;
}

/* The defaults o found, at another lane count: its chunk chosen as default_chunk chooses, into
 * *alt and *alt_s (INFINITY where none was timed); how many plans were timed. */
static int other_lanes(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, ar_mem_t buffer,
                       const ar_backend_ops_t *target, int channels, const ar_algo_opts_t *o, ar_algo_opts_t *alt,
                       double *alt_s) {
    *alt = *o;
    alt->channels = channels;
    alt->chunk_bytes = 0;
    *alt_s = INFINITY;
    /* another count is a try, capped at 8x the whole search's ops: its own chunk can hold far
     * more than the count chosen (a plan of one rank at one count, every rank's at twice it:
     * 1stage on switch:256 at 16 MB, 82 K ops at 64 channels, 41.8 M at 128), where the
     * plans it ought to time hold a few million (1stage on torus_2d_4x4 at 1 GB, 16
     * channels: 1.5 M) */
    return default_chunk(t, algo, count, dt, buffer, target, 8 * AR_CASE_TUNE_MAX_OPS, 0, alt, alt_s);
}

/* Another lane count for the defaults found (*out, *predicted_s): timed with its chunk chosen
 * as default_chunk chooses, and taken where it predicts a share `gain` less. */
static void take_lanes_if_faster(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt,
                                 ar_mem_t buffer, const ar_backend_ops_t *target, int channels, double gain,
                                 ar_algo_opts_t *out, double *predicted_s) {
    ar_algo_opts_t alt;
    double alt_s;
    other_lanes(t, algo, count, dt, buffer, target, channels, out, &alt, &alt_s);
    if (alt_s < *predicted_s * (1 - gain)) *out = alt, *predicted_s = alt_s;
}

/* A fused op's defaults: for each partition count (o's, else 1, 2, 4, ... 16 that divide M),
 * its allreduce's defaults at one partition's size, and (channels not asked) half as many
 * channels, a quarter, ... one, each with the algorithm's own chunk: the fused plan's
 * predicted time decides. Channels that hold a device's units (gemm_units) slow its products,
 * so the allreduce's own best is not the fused op's. More partitions, or channels, are taken
 * only where they predict AR_CASE_TUNE_FLAT less (each partition adds a product's fixed cost
 * and a round of the algorithm's own).
 * On hardware the product stays whole unless partitions are asked: it runs alone on every SM,
 * then the allreduce at its own defaults. Overlapped, the GPUs run a stage per partition
 * after its product (ar_plan_stages), the products beside a stage on clusters of one SM. The
 * model predicts that within 4.4% median, 21% max at 512 rows a partition and more (81
 * configurations on 2 x H200), but a product of a few hundred rows runs far below its rate
 * (256 x 8192 x 8192 beside a stage: 85 us, twice its share of the whole product), and its
 * picks there ran up to 1.54x slower than the whole product (docs/PERFORMANCE.md, "Fused
 * matmul + allreduce"). */
static int fused_defaults(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                          ar_mem_t buffer, const char *backend, ar_algo_opts_t *out, double *predicted_s,
                          ar_error_t *err) {
    const ar_backend_ops_t *target = backend ? ar_backend_find(backend) : NULL;
    const int hardware = target && (target->caps & AR_BACKEND_HARDWARE);
    const uint64_t M = o->gemm.m;
    /* an all-gather + matmul multiplies each rank's rows whole, as they arrive: one partition */
    const int gathered = o->coll == AR_COLL_ALLGATHER_MATMUL;
    const int most = o->partitions > 0 ? o->partitions : hardware || gathered ? 1 : 16;
    double best = INFINITY;
    int built = 0;
    for (int parts = o->partitions > 0 ? o->partitions : 1; parts <= most; parts *= 2) {
        if (!M || M % (uint64_t)parts) continue;
        ar_algo_opts_t io = *o, inner;
        io.coll = ar_coll_inner(o->coll);
        io.gemm = (ar_gemm_t){0, 0, 0};
        io.partitions = 0;
        double unused;
        /* the collective's own defaults: one partition's allreduce, or the all-gather of A */
        const uint64_t inner_count = gathered ? M * o->gemm.k : count / (uint64_t)parts;
        AR_TRY(ar_case_defaults(t, algo, inner_count, dt, &io, buffer, backend, &inner, &unused, err));
        /* fewest channels first: more are taken for a gain */
        int chans[16], nch = 0;
        for (int ch = inner.channels; ch >= 1 && nch < 16; ch /= 2) chans[nch++] = ch;
        if (o->channels > 0) nch = 1;
        for (int k = nch - 1; k >= 0; k--) {
            ar_algo_opts_t fo = *o;
            fo.channels = chans[k];
            fo.chunk_bytes = k == 0 ? inner.chunk_bytes : o->chunk_bytes;
            fo.partitions = parts;
            int brc;
            uint64_t nops;
            ar_error_t e;
            ar_error_clear(&e);
            const double s = predict(t, algo, count, dt, &fo, buffer, target, 0, &brc, &nops, NULL, &e);
            if (!built) *out = fo; /* what the build will say, at least */
            built = 1;
            if (s < best * (1 - AR_CASE_TUNE_FLAT)) best = s, *out = fo;
        }
    }
    if (predicted_s) *predicted_s = best;
    return AR_OK;
}

int ar_case_defaults(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                     ar_mem_t buffer, const char *backend, ar_algo_opts_t *out, double *predicted_s, ar_error_t *err) {
    const ar_backend_ops_t *b = backend ? ar_backend_find(backend) : NULL;
    if (b && (b->caps & AR_BACKEND_MODEL)) t = ar_algo_topology(ar_algo_find(algo), t, o); /* as it is timed */
    return case_defaults(t, algo, count, dt, o, buffer, backend, 0, out, predicted_s, NULL, err);
}

static int case_defaults(const ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt, const ar_algo_opts_t *o,
                         ar_mem_t buffer, const char *backend, int capacity_checked, ar_algo_opts_t *out,
                         double *predicted_s, int *fewest, ar_error_t *err) {
    if (ar_coll_fused(o->coll) && o->gemm.m) {
        const ar_algo_t *fa = ar_algo_find(algo);
        if (fa && !fa->probe && !fa->chooser && t->model && count)
            return fused_defaults(t, algo, count, dt, o, buffer, backend, out, predicted_s, err);
    }
    const ar_backend_ops_t *target = backend ? ar_backend_find(backend) : NULL;
    const int hardware = target && (target->caps & AR_BACKEND_HARDWARE);
    *out = *o;
    if (o->channels > 0 && o->chunk_bytes > 0 && !predicted_s) return AR_OK; /* nothing to choose, nothing asked */
    double unused;
    const int want_time = predicted_s != NULL;
    if (!predicted_s) predicted_s = &unused;
    *predicted_s = INFINITY;
    const ar_algo_t *a = ar_algo_find(algo);
    if (!a || a->probe || a->chooser || !t->model || count == 0) return AR_OK; /* the build says what is wrong */
    ar_error_t cap;
    if (!hardware && !capacity_checked && check_capacity(t, algo, count, dt, o, buffer, &cap) != AR_OK)
        return AR_OK; /* the algorithm's own, whose run says why */
    int fewest_ops = 0;
    AR_TRY(default_channels(t, a, algo, count, dt, o, buffer, target, want_time, out, predicted_s, &fewest_ops, err));
    if (fewest) *fewest = fewest_ops == FEWEST_TAKEN;
    /* the chunk is chosen with the channels (there where a first plan was all the search
     * would time), for channels asked too: the algorithm's own chunk at channels it did not
     * choose can be far from the best (2stage, 6 ranks on one H200 at 32 MB on 16 channels:
     * 457 us at its own 21888-byte pieces, 250 at 1 MB chunks) */
    if (o->chunk_bytes > 0 || out->chunk_bytes > 0 || !isfinite(*predicted_s)) return AR_OK;
    const int lanes_asked = o->channels > 0;
    tune_key_t key;
    memset(&key, 0, sizeof key);
    key.algo = a, key.model = t->model, key.count = count, key.dtype = dt, key.buffer = buffer, key.root = o->root;
    key.grid_w = o->grid_w, key.grid_h = o->grid_h, key.slots = o->slots, key.channels = out->channels;
    key.coll = o->coll;
    key.hardware = hardware, key.stage = 1, key.lanes_asked = lanes_asked;
    if (tune_find(t, &key, out, predicted_s)) return AR_OK;
    /* The own chunk at the count (the search's was at most AR_CASE_TUNE_MAX_BYTES) is timed
     * whatever it holds: a tree pipelines by its pieces, and its own chunk can win by far over
     * the ladder's plans under their cap (center_root on ring_1d:1024 at 1 GB: 31.7 ms at its
     * own 512 KB, 671 in 32 MB pieces). But where rank 0's plan may stand for every rank's,
     * one past 8x the search's ops is every rank's at a size where rank 0's no longer stands
     * (2stage on switch:256 at 64 MB under h200_sxm: its mirror offsets past their budget,
     * every rank's 42 M ops, 36 s to time, where the ladder's 64 KB won): capped as another
     * count's try is. */
    const int may_stand = may_stand_for_all(a, t, o);
    const int timed = default_chunk(t, algo, count, dt, buffer, target, may_stand ? 8 * AR_CASE_TUNE_MAX_OPS : 0, 0, out,
                                    predicted_s);
    /* The channels' search ran at AR_CASE_TUNE_MAX_BYTES at most: where no plan was timed at
     * the count itself (its floor past o->max_s, auto's twice the best so far), its time there
     * is not known, and the search's, of a smaller size, is no time of this case (1stage, 8
     * ranks on one H100 at 256 MB: 1084 us at 16 MB, which auto took over 2stage's 3058, to
     * run 23838). */
    if (!timed && count * ar_dtype_size(dt) > AR_CASE_TUNE_MAX_BYTES) *predicted_s = INFINITY;
    /* No plan at these lanes timed at the count (every rank's ops past the search's, where the
     * lanes leave the ranks' parts uneven and the even counts around it are too far apart:
     * 2stage on switch:256 at 10^8 bytes, 128 lanes): the most lanes, halved, that are. */
    for (int lanes = out->channels / 2; !timed && !hardware && !lanes_asked && may_stand && lanes >= 1; lanes /= 2) {
        ar_algo_opts_t fewer;
        double fewer_s;
        if (other_lanes(t, algo, count, dt, buffer, target, lanes, out, &fewer, &fewer_s)) {
            *out = fewer, *predicted_s = fewer_s;
            break;
        }
    }
    /* The channels were found each at its own chunk, and twice the lanes can gain more from a
     * chunk of their own (torus2d on full:8, h200_sxm, 16 MB: 32 and 64 lanes within 0.1% at
     * their own chunks, 384.7 and 371.5 us at their best): on a model backend twice the lanes
     * are timed with their chunk chosen alike, and taken where they predict AR_CASE_TUNE_FLAT
     * less, at every size (where only up to AR_CASE_TUNE_MAX_BYTES, a series stepped down
     * past it: center_root on mesh_2d:4x4, 8 channels at 16 MB, 71.5 GB/s, and 4 at 32 MB,
     * 62.3). */
    if (!hardware && !lanes_asked && 2 * out->channels <= a->max_channels && (uint64_t)(2 * out->channels) <= count)
        take_lanes_if_faster(t, algo, count, dt, buffer, target, 2 * out->channels, AR_CASE_TUNE_FLAT, out,
                             predicted_s);
    /* Beyond the size the channels were found at, fewer lanes can gain where the search at
     * AR_CASE_TUNE_MAX_BYTES could not see it. Each is timed with its chunk chosen alike, on
     * a model backend only (hardware keeps the counts measured):
     * - lanes that load the peers alike, taken where they predict less: an unevenly loaded
     *   peer's lanes fall behind by a share of the whole (2stage on full:8: at 16 MB 128
     *   lanes are 4% faster than 126, at 1 GB 6% slower), a cost the model, if anything,
     *   underestimates (1stage on 8 ranks of h200_calibrated at 256 MB: 28 lanes 0.7%
     *   faster than 32 in analytic, 3.7% in sim);
     * - half the lanes, taken where they predict AR_CASE_TUNE_FLAT less, a gain the model
     *   tells from its rounding (mesh2d on torus_2d_4x4 at 64 MB: 16 lanes 0.3% faster than
     *   32 in analytic, 2.6% slower in sim): what more lanes bought at
     *   AR_CASE_TUNE_MAX_BYTES, each op's fixed costs hidden behind another lane's bytes, is
     *   a smaller share of a larger size, while lanes that share a link still divide it
     *   (torus2d on full:8, h200_sxm: 64 lanes faster at 16 MB; at 1 GB 49.9 GB/s against
     *   52.2 on 32, with the L2 made unbounded alike). */
    if (count * ar_dtype_size(dt) > AR_CASE_TUNE_MAX_BYTES && !hardware && !lanes_asked) {
        const int period = even_lanes_period(a, t, hardware, 1);
        const int found = out->channels;
        const struct { int channels; double gain; } fewer[] = {
            {period > 1 && found > period && found % period ? found / period * period : 0, 0},
            {found / 2, AR_CASE_TUNE_FLAT},
        };
        for (size_t i = 0; i < sizeof fewer / sizeof fewer[0]; i++)
            if (fewer[i].channels >= 1)
                take_lanes_if_faster(t, algo, count, dt, buffer, target, fewer[i].channels, fewer[i].gain, out,
                                     predicted_s);
    }
    /* On hardware too the lanes found at AR_CASE_TUNE_MAX_BYTES are not those of a larger
     * count: twice and half as many are timed at the count, each with its chunk chosen alike,
     * and taken where they predict what the model can rank, AR_CASE_TUNE_HW_GAIN less
     * (torus2d, 4 ranks on one H100 at 128 MB: 16 lanes found at 16 MB, where 32 are 4.6%
     * slower; at 128 MB 32 predict 14.5% less, and run 876 us against 16's 1034). */
    if (count * ar_dtype_size(dt) > AR_CASE_TUNE_MAX_BYTES && hardware && !lanes_asked && isfinite(*predicted_s)) {
        const int found = out->channels;
        if (2 * found <= a->max_channels && (uint64_t)(2 * found) <= count)
            take_lanes_if_faster(t, algo, count, dt, buffer, target, 2 * found, AR_CASE_TUNE_HW_GAIN, out, predicted_s);
        if (out->channels == found && found / 2 >= 1)
            take_lanes_if_faster(t, algo, count, dt, buffer, target, found / 2, AR_CASE_TUNE_HW_GAIN, out, predicted_s);
    }
    /* The first count alone timed (default_channels): the channels searched at one piece a
     * lane instead where they predict less (torus2d on torus_2d:16x16 at 64 MB: 64 channels,
     * 365 us, where the one count led to 2 and 1202 us; ring on mesh_2d:12x12 at 4 MB keeps
     * its 2 channels in 8 KB chunks, 144.6 us, where the ladder at one piece a lane stops at
     * 14.6 KB chunks, 152.8) */
    if (fewest_ops == FEWEST_WEIGHED) {
        ar_algo_opts_t alt = *o;
        double alt_s = INFINITY;
        fewest_ops_default(t, algo, count, dt, o, buffer, target, 1, 1, &alt, &alt_s);
        const int take = alt_s < *predicted_s;
        if (take) *out = alt, *predicted_s = alt_s;
        if (fewest) *fewest = take;
    }
    if (!(o->max_s > 0)) tune_keep(t, &key, out, *predicted_s); /* (a search cut short is not this key's) */
    return AR_OK;
}
