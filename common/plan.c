/* Plan building: ops are appended per (rank, channel) in any order and laid out
 * channel by channel by ar_plan_finish; or, given the layout a sizing build found
 * (ar_plan_layout), written in place as they come. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/plan.h"
#include "arsim/util.h"

typedef struct chan_build_s {
    ar_op_t *ops;
    uint32_t n, cap;
} chan_build_t;

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem) {
    if (need <= *cap) return AR_OK;
    uint32_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > UINT32_MAX / 2) return AR_ELIMIT;
        nc *= 2;
    }
    void *p = realloc(*arr, (size_t)nc * elem);
    if (!p) return AR_ENOMEM;
    *arr = p;
    *cap = nc;
    return AR_OK;
}

int ar_plan_check_size(int nranks, uint64_t count, ar_dtype_t dtype, ar_error_t *err) {
    uint64_t es = ar_dtype_size(dtype);
    if (nranks < 1 || count == 0 || es == 0)
        return AR_ERR(err, AR_EINVAL, "plan: count and ranks must be at least 1");
    if (count > (UINT64_MAX >> 1) / es / (uint64_t)nranks)
        return AR_ERR(err, AR_ELIMIT,
                      "%" PRIu64 " elements of %" PRIu64 " bytes on %d ranks: total bytes overflow "
                      "63 bits", count, es, nranks);
    return AR_OK;
}

const char *ar_plan_strerror(int rc) {
    static char msg[224];
    if (rc == AR_ELIMIT) {
        snprintf(msg, sizeof msg,
                 "the plan would exceed arsim's limits (byte counts overflowing 63 bits, more "
                 "than %u source addresses, or more than %u flags over all ranks)", (unsigned)AR_PLAN_MAX_SRCS,
                 (unsigned)AR_PLAN_MAX_FLAGS);
        return msg;
    }
    return ar_strerror(rc);
}

int ar_plan_new(const char *algo, int nranks, int nchannels, uint64_t count, ar_dtype_t dtype,
                ar_plan_t **out) {
    if (nranks < 1 || nchannels < 1 || count == 0) return AR_EINVAL;
    if (ar_plan_check_size(nranks, count, dtype, NULL) != AR_OK) return AR_ELIMIT;
    ar_plan_t *p = calloc(1, sizeof *p);
    if (!p) return AR_ENOMEM;
    snprintf(p->algo, sizeof p->algo, "%s", algo ? algo : "");
    p->nranks = nranks;
    p->nchannels = nchannels;
    p->count = count;
    p->dtype = dtype;
    p->root = -1;
    p->only_rank = -1;
    p->only_span = 1;
    p->build = ar_zeroed((size_t)nranks * nchannels, sizeof(chan_build_t));
    p->chans = ar_zeroed((size_t)nranks * nchannels, sizeof(ar_chan_t));
    p->rank_flags = calloc((size_t)nranks, sizeof *p->rank_flags);
    if (!p->build || !p->chans || !p->rank_flags) {
        ar_plan_free(p);
        return AR_ENOMEM;
    }
    *out = p;
    return AR_OK;
}

void ar_plan_only_rank(ar_plan_t *p, int rank, int span) {
    p->only_rank = rank;
    p->only_span = span > 1 && rank == 0 ? span : 1;
}

/* An op of `rank` that a plan of one other rank, or of a row, drops (its emitter returns AR_OK). */
static int dropped(const ar_plan_t *p, int rank) { return !ar_plan_keeps_rank(p, rank); }

/* The channels [*lo, *hi) that may hold ops: every rank's, or in a plan of one rank or a row
 * its ranks' alone (the others stay empty: a pass over them would cost every rank's). */
static void kept_chans(const ar_plan_t *p, uint64_t *lo, uint64_t *hi) {
    const uint64_t per = (uint64_t)p->nchannels;
    *lo = p->only_rank >= 0 ? (uint64_t)p->only_rank * per : 0;
    *hi = *lo + (uint64_t)ar_plan_kept_ranks(p) * per;
}

void ar_plan_sizing(ar_plan_t *p, ar_plan_size_t *s) {
    const uint64_t max_ops = s->max_ops;
    const int keep_layout = s->keep_layout;
    memset(s, 0, sizeof *s);
    s->max_ops = max_ops;
    s->keep_layout = keep_layout;
    s->nranks = p->nranks;
    s->nchannels = p->nchannels;
    s->count = p->count;
    s->elem_bytes = ar_dtype_size(p->dtype);
    p->sizing = s;
}

void ar_plan_size_free(ar_plan_size_t *s) {
    ar_zeroed_free(s->chan_ops, (size_t)s->nranks * s->nchannels, sizeof *s->chan_ops);
    s->chan_ops = NULL;
}

int ar_plan_layout(ar_plan_t *p, const ar_plan_size_t *s) {
    const uint64_t nch = (uint64_t)p->nranks * (uint64_t)p->nchannels;
    if (!s->chan_ops || s->nranks != p->nranks || s->nchannels != p->nchannels || s->ops > UINT32_MAX ||
        s->srcs > AR_PLAN_MAX_SRCS)
        return AR_EINVAL;
    p->ops = malloc((s->ops ? s->ops : 1) * sizeof(ar_op_t));
    p->srcs = malloc((s->srcs ? s->srcs : 1) * sizeof(ar_addr_t));
    if (!p->ops || !p->srcs) return AR_ENOMEM;
    p->cap_ops = (uint32_t)s->ops;
    p->cap_srcs = (uint32_t)s->srcs;
    uint32_t at = 0;
    uint64_t lo, hi;
    kept_chans(p, &lo, &hi);
    for (uint64_t i = lo; i < hi && i < nch; i++) {
        p->chans[i].first = at;
        p->chans[i].nops = 0;
        ((chan_build_t *)p->build)[i].cap = s->chan_ops[i]; /* each channel's room */
        at += s->chan_ops[i];
    }
    p->laid_out = 1;
    return at == s->ops ? AR_OK : AR_EINVAL;
}

/* The flag counters of the kept ranks, each rank's own. */
static uint64_t kept_flags(const ar_plan_t *p) {
    const int first = ar_plan_first_kept(p), n = ar_plan_kept_ranks(p);
    uint64_t total = 0;
    for (int k = 0; k < n; k++) total += p->rank_flags[first + k];
    return total;
}

static void size_finish(ar_plan_t *p) {
    ar_plan_size_t *s = p->sizing;
    const chan_build_t *cb = p->build;
    const uint64_t nch = (uint64_t)p->nranks * (uint64_t)p->nchannels;
    uint64_t lo, hi;
    kept_chans(p, &lo, &hi);
    if (s->keep_layout && (s->chan_ops = ar_zeroed(nch, sizeof *s->chan_ops)))
        for (uint64_t i = lo; i < hi; i++) s->chan_ops[i] = cb[i].n;
    s->run_chans = hi;
    s->busy_chans = 0;
    for (uint64_t i = lo; i < hi; i++) s->busy_chans += cb[i].n > 0;
    s->nflags = p->nflags ? p->nflags : 1;
    s->flag_slots = kept_flags(p);
    s->scratch_elems = p->scratch_elems;
    s->host_elems = p->host_elems;
    s->in_elems = p->in_elems ? p->in_elems : p->count;
    s->bytes = s->ops * sizeof(ar_op_t) + s->srcs * sizeof(ar_addr_t) +
               nch * (sizeof(ar_chan_t) + sizeof(chan_build_t)) + s->flag_slots * sizeof(uint64_t) +
               (uint64_t)p->nranks * sizeof(uint32_t) + ((uint64_t)ar_plan_kept_ranks(p) + 1) * sizeof(uint64_t);
}

static int append(ar_plan_t *p, int rank, int chan, const ar_op_t *op) {
    if (!p->build) return AR_EINVAL; /* already finished */
    if (rank < 0 || rank >= p->nranks || chan < 0 || chan >= p->nchannels) return AR_EINVAL;
    chan_build_t *cb = &((chan_build_t *)p->build)[rank * p->nchannels + chan];
    if (p->sizing) {
        ar_plan_size_t *s = p->sizing;
        s->signals += op->code == AR_OP_SIGNAL;
        if (++s->ops > s->max_ops && s->max_ops) {
            s->over = 1;
            s->scratch_elems = p->scratch_elems, s->host_elems = p->host_elems; /* set so far */
            s->in_elems = p->in_elems ? p->in_elems : p->count;
            return AR_ELIMIT;
        }
        cb->n++; /* counted, not stored */
        return AR_OK;
    }
    if (p->laid_out) {
        ar_chan_t *c = &p->chans[rank * p->nchannels + chan];
        if (c->nops == cb->cap) return AR_EINVAL; /* more than the sizing counted */
        p->ops[c->first + c->nops++] = *op;
        return AR_OK;
    }
    AR_TRY(grow((void **)&cb->ops, &cb->cap, cb->n + 1, sizeof(ar_op_t)));
    cb->ops[cb->n++] = *op;
    return AR_OK;
}

/* AR_ELIMIT, the limit named in p for the build's error (ar__plan_done). */
static int over_limit(ar_plan_t *p, const char *what, uint64_t most) {
    p->limit = what;
    p->limit_most = most;
    return AR_ELIMIT;
}

static int add_srcs(ar_plan_t *p, const ar_addr_t *srcs, uint32_t k, uint32_t *first) {
    if ((uint64_t)p->nsrcs + k > AR_PLAN_MAX_SRCS) return over_limit(p, "source addresses", AR_PLAN_MAX_SRCS);
    if (p->sizing) {
        *first = p->nsrcs;
        p->nsrcs += k;
        p->sizing->srcs = p->nsrcs;
        return AR_OK;
    }
    if (p->laid_out && p->nsrcs + k > p->cap_srcs) return AR_EINVAL; /* more than the sizing counted */
    AR_TRY(grow((void **)&p->srcs, &p->cap_srcs, p->nsrcs + k, sizeof(ar_addr_t)));
    *first = p->nsrcs;
    memcpy(p->srcs + p->nsrcs, srcs, k * sizeof *srcs);
    p->nsrcs += k;
    return AR_OK;
}

int ar_plan_copy(ar_plan_t *p, int rank, int chan, ar_addr_t dst, ar_addr_t src, uint64_t n) {
    ar_op_t op = {.code = AR_OP_COPY, .nsrc = 1, .n = n, .dst = dst};
    if (n == 0) return AR_OK; /* an empty tail is no op */
    if (dropped(p, rank)) return AR_OK;
    AR_TRY(add_srcs(p, &src, 1, &op.src));
    return append(p, rank, chan, &op);
}

int ar_plan_reduce(ar_plan_t *p, int rank, int chan, ar_addr_t dst, const ar_addr_t *srcs,
                   uint32_t k, uint64_t n) {
    if (n == 0) return AR_OK;
    if (k == 1) return ar_plan_copy(p, rank, chan, dst, srcs[0], n);
    ar_op_t op = {.code = AR_OP_REDUCE, .nsrc = k, .n = n, .dst = dst};
    if (dropped(p, rank)) return AR_OK;
    AR_TRY(add_srcs(p, srcs, k, &op.src));
    return append(p, rank, chan, &op);
}

int ar_plan_netreduce(ar_plan_t *p, int rank, int chan, ar_addr_t dst, ar_addr_t src, uint64_t n) {
    if (dst.rank != rank || src.rank != rank) return AR_EINVAL;
    if (n == 0) return AR_OK;
    ar_op_t op = {.code = AR_OP_NETREDUCE, .nsrc = 1, .n = n, .dst = dst};
    if (dropped(p, rank)) return AR_OK;
    AR_TRY(add_srcs(p, &src, 1, &op.src));
    return append(p, rank, chan, &op);
}

int ar_plan_compute(ar_plan_t *p, int rank, int chan, ar_addr_t dst, ar_addr_t a, ar_addr_t b, uint64_t m,
                    uint64_t N, uint64_t K) {
    if (dst.rank != rank || a.rank != rank || b.rank != rank || N > UINT32_MAX || N == 0 || K == 0)
        return AR_EINVAL;
    if (m == 0) return AR_OK;
    ar_op_t op = {.code = AR_OP_COMPUTE, .nsrc = 2, .n = m, .dst = dst, .flag = (uint32_t)N, .count = K};
    const ar_addr_t ab[2] = {a, b};
    if (dropped(p, rank)) return AR_OK;
    AR_TRY(add_srcs(p, ab, 2, &op.src));
    return append(p, rank, chan, &op);
}

/* An op naming flag `flag` of `rank` emitted (rc AR_OK): that rank's flags (the kept rank's
 * that stands for it) reach past it. rc. */
static int noted(ar_plan_t *p, int rc, int rank, uint32_t flag) {
    if (rc != AR_OK || rank < 0 || rank >= p->nranks) return rc;
    if (flag >= p->nflags) p->nflags = flag + 1;
    uint32_t *n = &p->rank_flags[ar_plan_kept_rank(p, rank)];
    if (flag >= *n) *n = flag + 1;
    return rc;
}

int ar_plan_signal(ar_plan_t *p, int rank, int chan, int target_rank, uint32_t flag) {
    if (target_rank < 0 || target_rank >= p->nranks) return AR_EINVAL;
    ar_op_t op = {.code = AR_OP_SIGNAL, .dst = {target_rank, 0, 0}, .flag = flag};
    return noted(p, dropped(p, rank) ? AR_OK : append(p, rank, chan, &op), target_rank, flag);
}

int ar_plan_wait(ar_plan_t *p, int rank, int chan, uint32_t flag, uint64_t count) {
    if (count == 0) return AR_OK;
    ar_op_t op = {.code = AR_OP_WAIT, .dst = {rank, 0, 0}, .flag = flag, .count = count};
    return noted(p, dropped(p, rank) ? AR_OK : append(p, rank, chan, &op), rank, flag);
}

int ar_plan_wait_prev(ar_plan_t *p, int rank, int chan, uint32_t flag) {
    ar_op_t op = {.code = AR_OP_WAIT, .dst = {rank, 0, 0}, .flag = flag, .count = 0};
    return noted(p, dropped(p, rank) ? AR_OK : append(p, rank, chan, &op), rank, flag);
}

int ar_plan_wait_back(ar_plan_t *p, int rank, int chan, uint32_t flag, uint32_t back, uint64_t count) {
    if (back > 1) return AR_EINVAL;
    if (back == 0 && count == 0) return ar_plan_wait_prev(p, rank, chan, flag);
    ar_op_t op = {.code = AR_OP_WAIT, .back = (uint8_t)back, .dst = {rank, 0, 0}, .flag = flag, .count = count};
    return noted(p, dropped(p, rank) ? AR_OK : append(p, rank, chan, &op), rank, flag);
}

/* Per (rank, flag) of p: which channels SIGNAL it, 1 computing ones, 2 others (or'd). */
static unsigned char *flag_signallers(const ar_plan_t *p) {
    unsigned char *by = calloc(ar_plan_flag_slots(p), 1);
    if (!by) return NULL;
    for (int i = 0; i < p->nranks * p->nchannels; i++) {
        const ar_chan_t *ch = &p->chans[i];
        for (uint32_t j = 0; j < ch->nops; j++) {
            const ar_op_t *op = &p->ops[ch->first + j];
            if (op->code == AR_OP_SIGNAL) by[ar_plan_flag(p, ar_plan_signal_rank(p, op), op->flag)] |= ch->computes ? 1 : 2;
        }
    }
    return by;
}

/* A WAIT for SIGNALs of this execution (not only earlier ones'). */
static int waits_now(const ar_op_t *op) { return op->code == AR_OP_WAIT && !op->back && op->count > 0; }

/* ar_chan_t.after_product: a channel whose first op WAITs (this execution) for a flag that
 * only computing channels SIGNAL. */
static int mark_after_product(ar_plan_t *p) {
    uint64_t lo, hi;
    kept_chans(p, &lo, &hi);
    int any = 0;
    for (uint64_t i = lo; i < hi; i++) p->chans[i].after_product = 0, any |= p->chans[i].computes != 0;
    if (!any) return AR_OK;
    unsigned char *by = flag_signallers(p);
    if (!by) return AR_ENOMEM;
    for (uint64_t i = lo; i < hi; i++) {
        ar_chan_t *ch = &p->chans[i];
        if (ch->computes || !ch->nops) continue;
        const ar_op_t *op = &p->ops[ch->first];
        ch->after_product = op->code == AR_OP_WAIT && !op->back && op->count > 0 &&
                            by[ar_plan_flag(p, (int)(i / p->nchannels), op->flag)] == 1;
    }
    free(by);
    return AR_OK;
}

static void free_build(ar_plan_t *p) {
    ar_zeroed_free(p->build, (size_t)p->nranks * p->nchannels, sizeof(chan_build_t));
    p->build = NULL;
}

int ar_plan_finish(ar_plan_t *p) {
    if (!p->build) return AR_OK;
    chan_build_t *cb = p->build;
    uint64_t lo, hi;
    kept_chans(p, &lo, &hi);
    uint64_t total = 0;
    for (uint64_t i = lo; i < hi; i++) total += cb[i].n;
    if (total > UINT32_MAX) return over_limit(p, "ops", UINT32_MAX);
    const int first = ar_plan_first_kept(p);
    const uint64_t counters = kept_flags(p);
    if (counters == 0) p->rank_flags[first] = 1; /* a counter at least, as a run keeps one */
    if (counters > AR_PLAN_MAX_FLAGS) return over_limit(p, "flags", AR_PLAN_MAX_FLAGS);
    if (p->sizing) {
        size_finish(p);
        return AR_OK; /* build stays: nothing to lay out, and the plan is only freed */
    }
    if (p->laid_out) { /* in place already: every channel as full as the sizing said */
        for (uint64_t i = lo; i < hi; i++)
            if (p->chans[i].nops != cb[i].cap) return AR_EINVAL;
        if (p->nsrcs != p->cap_srcs) return AR_EINVAL;
        total = p->cap_ops;
    } else {
        free(p->ops);
        p->ops = malloc((total ? total : 1) * sizeof(ar_op_t));
        if (!p->ops) return AR_ENOMEM;
    }
    if (p->nflags == 0) p->nflags = 1;
    const int nkept = ar_plan_kept_ranks(p);
    free(p->flag_at);
    p->flag_at = malloc(((size_t)nkept + 1) * sizeof *p->flag_at);
    if (!p->flag_at) return AR_ENOMEM;
    p->flag_at[0] = 0;
    for (int k = 0; k < nkept; k++) p->flag_at[k + 1] = p->flag_at[k] + p->rank_flags[first + k];
    p->per_epoch = calloc(ar_plan_flag_slots(p), sizeof(uint64_t));
    if (!p->per_epoch) return AR_ENOMEM;
    uint32_t at = 0;
    for (uint64_t i = lo; i < hi && !p->laid_out; i++) {
        p->chans[i].first = at;
        p->chans[i].nops = cb[i].n;
        if (cb[i].n) memcpy(p->ops + at, cb[i].ops, cb[i].n * sizeof(ar_op_t));
        at += cb[i].n;
        free(cb[i].ops);
    }
    p->nops = p->cap_ops = p->laid_out ? (uint32_t)total : at;
    for (uint64_t i = lo; i < hi; i++) {
        p->chans[i].computes = 0;
        for (uint32_t j = 0; j < p->chans[i].nops && !p->chans[i].computes; j++)
            p->chans[i].computes = p->ops[p->chans[i].first + j].code == AR_OP_COMPUTE;
    }
    for (uint32_t i = 0; i < p->nops; i++)
        if (p->ops[i].code == AR_OP_SIGNAL)
            p->per_epoch[ar_plan_flag(p, ar_plan_signal_rank(p, &p->ops[i]), p->ops[i].flag)]++;
    AR_TRY(mark_after_product(p));
    free_build(p);
    return AR_OK;
}

int ar_plan_products_first_alone(const ar_plan_t *p, const int *rank_dev, int dev) {
    int computes = 0;
    for (int r = 0; r < p->nranks; r++) {
        if (rank_dev[r] != dev) continue;
        for (int c = 0; c < p->nchannels; c++) {
            const ar_chan_t *ch = ar_plan_chan(p, r, c);
            if (ch->computes) computes = 1;
            else if (ch->nops && !ch->after_product) return 0;
        }
    }
    return computes;
}

int ar_plan_stages(const ar_plan_t *p, uint32_t *stage) {
    memset(stage, 0, (size_t)p->nops * sizeof *stage);
    const int nch = p->nranks * p->nchannels;
    const size_t nrf = ar_plan_flag_slots(p);
    unsigned char *by = flag_signallers(p);
    int64_t *last = malloc(nrf * sizeof *last), *need = malloc(nrf * sizeof *need);
    int S = 0; /* the channels' common number of product waits; 0: not one number */
    if (!by || !last || !need) {
        S = AR_ENOMEM;
        goto out;
    }
    int computes = 0, first = 1;
    for (int i = 0; i < nch; i++) {
        const ar_chan_t *ch = &p->chans[i];
        computes |= ch->computes != 0;
        if (ch->computes || !ch->nops) continue;
        const unsigned char *rank_by = by + ar_plan_flag(p, i / p->nchannels, 0);
        uint32_t n = 0;
        for (uint32_t j = 0; j < ch->nops; j++) {
            const ar_op_t *op = &p->ops[ch->first + j];
            n += waits_now(op) && rank_by[op->flag] == 1;
            if (!n) break; /* its first op is not a product wait */
            stage[ch->first + j] = n - 1;
        }
        if (!n || (!first && n != (uint32_t)S)) goto one;
        S = (int)n, first = 0;
    }
    if (!computes || S <= 1) goto one;
    /* last: per (rank, flag), the latest stage a channel that computes nothing SIGNALs it at */
    for (size_t f = 0; f < nrf; f++) last[f] = -1, need[f] = -1;
    for (int i = 0; i < nch; i++) {
        const ar_chan_t *ch = &p->chans[i];
        for (uint32_t j = ch->first; j < ch->first + ch->nops && !ch->computes; j++) {
            const ar_op_t *op = &p->ops[j];
            const size_t f = ar_plan_flag(p, ar_plan_signal_rank(p, op), op->flag);
            if (op->code == AR_OP_SIGNAL && (int64_t)stage[j] > last[f]) last[f] = stage[j];
        }
    }
    /* need: per flag computing channels SIGNAL, the latest stage whose SIGNALs they wait for first;
     * INT64_MAX where that is another computing channel's */
    for (int i = 0; i < nch; i++) {
        const ar_chan_t *ch = &p->chans[i];
        const size_t rf = ch->nops ? ar_plan_flag(p, i / p->nchannels, 0) : 0;
        int64_t before = -1;
        for (uint32_t j = ch->first; j < ch->first + ch->nops && ch->computes; j++) {
            const ar_op_t *op = &p->ops[j];
            if (waits_now(op)) before = by[rf + op->flag] & 1 ? INT64_MAX : before > last[rf + op->flag] ? before : last[rf + op->flag];
            const size_t f = ar_plan_flag(p, ar_plan_signal_rank(p, op), op->flag);
            if (op->code == AR_OP_SIGNAL && before > need[f]) need[f] = before;
        }
    }
    /* each stage's waits are met by SIGNALs of stages up to it and by products made without it */
    for (int i = 0; i < nch; i++) {
        const ar_chan_t *ch = &p->chans[i];
        const size_t rf = ch->nops ? ar_plan_flag(p, i / p->nchannels, 0) : 0;
        for (uint32_t j = ch->first; j < ch->first + ch->nops && !ch->computes; j++) {
            const ar_op_t *op = &p->ops[j];
            if (!waits_now(op)) continue;
            const unsigned char b = by[rf + op->flag];
            if (b == 1 ? need[rf + op->flag] >= (int64_t)stage[j] : (b & 1) || last[rf + op->flag] > (int64_t)stage[j])
                goto one;
        }
    }
    goto out;
one:
    memset(stage, 0, (size_t)p->nops * sizeof *stage);
    S = 1;
out:
    free(by);
    free(last);
    free(need);
    return S;
}

int ar_plan_first_compute(const ar_plan_t *p, const ar_op_t *op) {
    if (op->code != AR_OP_COMPUTE) return 0;
    const uint32_t at = (uint32_t)(op - p->ops);
    for (int i = 0; i < p->nranks * p->nchannels; i++) {
        const ar_chan_t *ch = &p->chans[i];
        if (at < ch->first || at >= ch->first + ch->nops) continue;
        for (uint32_t j = ch->first; j < at; j++)
            if (p->ops[j].code == AR_OP_COMPUTE) return 0;
        return 1;
    }
    return 0;
}

const char *ar_op_name(uint32_t code) {
    static const char *const names[AR_NOPCODE] = {"COPY", "REDUCE", "SIGNAL", "WAIT", "NETREDUCE", "COMPUTE"};
    return code < AR_NOPCODE ? names[code] : "?";
}

void ar_plan_free(ar_plan_t *p) {
    if (!p) return;
    if (p->build) {
        chan_build_t *cb = p->build;
        uint64_t lo, hi;
        kept_chans(p, &lo, &hi);
        for (uint64_t i = lo; i < hi; i++) free(cb[i].ops);
        free_build(p);
    }
    ar_zeroed_free(p->chans, (size_t)p->nranks * p->nchannels, sizeof(ar_chan_t));
    AR_FREE_EACH(p->ops, p->srcs, p->per_epoch, p->rank_flags, p->flag_at, p->mirror_off, p);
}

static const char *const COLL_NAMES[AR_NCOLL] = {"allreduce", "reducescatter", "allgather", "matmul-allreduce",
                                                    "allgather-matmul"};

const char *ar_coll_name(ar_coll_t c) {
    return (unsigned)c < AR_NCOLL ? COLL_NAMES[c] : NULL;
}

int ar_coll_parse(const char *name, ar_coll_t *c) {
    for (int i = 0; name && i < AR_NCOLL; i++)
        if (!strcmp(name, COLL_NAMES[i])) {
            *c = (ar_coll_t)i;
            return AR_OK;
        }
    return AR_EINVAL;
}

uint64_t ar_plan_buf_elems(const ar_plan_t *p, int rank, ar_buf_t buf) {
    if (rank == AR_RANK_HOST) return p->host_elems;
    switch (buf) {
    case AR_BUF_IN: return p->in_elems ? p->in_elems : p->count;
    case AR_BUF_OUT: return p->count;
    case AR_BUF_SCRATCH: return p->scratch_elems;
    default: return 0;
    }
}

static void dump_addr(FILE *f, ar_addr_t a) {
    static const char *const bn[] = {"IN", "OUT", "SCRATCH"};
    unsigned b = a.buf & AR_ADDR_BUF_MASK;
    if (a.rank == AR_RANK_HOST) fprintf(f, "host[%" PRIu64, a.off);
    else fprintf(f, "r%d.%s[%" PRIu64, a.rank, b < AR_NBUF ? bn[b] : "?", a.off);
    fprintf(f, "%s]", a.buf & AR_ADDR_PARITY ? " +parity" : "");
}

void ar_plan_dump(const ar_plan_t *p, void *stream) {
    FILE *f = stream;
    fprintf(f, "plan %s: %d ranks x %d channels, count %" PRIu64 " %s, scratch %" PRIu64
               ", host %" PRIu64 ", %u flags, %u ops\n",
            p->algo, p->nranks, p->nchannels, p->count, ar_dtype_name(p->dtype), p->scratch_elems,
            p->host_elems, p->nflags, p->nops);
    if (p->parity_elems) fprintf(f, "parity slot offset %" PRIu64 "\n", p->parity_elems);
    if (p->gemm.m)
        fprintf(f, "%s: gemm M=%" PRIu64 " N=%" PRIu64 " K=%" PRIu64 ", IN %" PRIu64 " elements\n",
                ar_coll_name(p->coll), p->gemm.m, p->gemm.n, p->gemm.k, ar_plan_buf_elems(p, 0, AR_BUF_IN));
    for (int r = 0; r < p->nranks; r++)
        for (int c = 0; c < p->nchannels; c++) {
            const ar_chan_t *ch = ar_plan_chan(p, r, c);
            if (!ch->nops) continue;
            fprintf(f, "rank %d chan %d:\n", r, c);
            for (uint32_t i = 0; i < ch->nops; i++) {
                const ar_op_t *op = &p->ops[ch->first + i];
                fprintf(f, "  %4u ", i);
                switch (op->code) {
                case AR_OP_COPY:
                case AR_OP_REDUCE:
                case AR_OP_NETREDUCE:
                    fprintf(f, "%s ", op->code == AR_OP_COPY ? "COPY  " : op->code == AR_OP_REDUCE ? "REDUCE" : "NETREDUCE");
                    dump_addr(f, op->dst);
                    fprintf(f, " <-");
                    for (uint32_t s = 0; s < op->nsrc; s++) {
                        fputc(' ', f);
                        dump_addr(f, p->srcs[op->src + s]);
                    }
                    fprintf(f, " n=%" PRIu64 "\n", op->n);
                    break;
                case AR_OP_COMPUTE:
                    fprintf(f, "COMPUTE ");
                    dump_addr(f, op->dst);
                    fprintf(f, " <- ");
                    dump_addr(f, p->srcs[op->src]);
                    fprintf(f, " x ");
                    dump_addr(f, p->srcs[op->src + 1]);
                    fprintf(f, " m=%" PRIu64 " n=%u k=%" PRIu64 "\n", op->n, op->flag, op->count);
                    break;
                case AR_OP_SIGNAL: fprintf(f, "SIGNAL r%d flag %u\n", op->dst.rank, op->flag); break;
                case AR_OP_WAIT:
                    fprintf(f, "WAIT   flag %u count %" PRIu64 "%s\n", op->flag, op->count,
                            op->back ? " back 1" : "");
                    break;
                }
            }
        }
}

uint64_t ar_plan_chunk_bytes(const ar_plan_t *p) {
    uint64_t most = 0;
    for (uint32_t i = 0; i < p->nops; i++)
        if (ar_op_moves_data(&p->ops[i]) && p->ops[i].n > most)
            most = p->ops[i].n;
    return most * ar_dtype_size(p->dtype);
}
