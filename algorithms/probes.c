/* algorithms: probe plans. Hand-built plan shapes that measure what the executor
 * can do on a machine (arsim calibrate, arsim bench --algo x-...), and what the
 * model says of the same shapes (any backend: arsim run --algo x-...). They are
 * entries of the algorithm table (ar_algo_probes, `arsim list probes`) but compute
 * no allreduce, so `--algo all` leaves them out. Every channel works on its own
 * element range and its own flags.
 *
 *  x-oneshot   pull: arrive (SIGNAL every peer), WAIT; REDUCE OUT <- every IN;
 *              SIGNAL, WAIT (peers are done reading my IN).
 *  x-pushshot  push: COPY my IN into every peer's SCRATCH slot, SIGNAL; WAIT;
 *              REDUCE OUT <- IN + every slot; SIGNAL, WAIT (my SCRATCH is free
 *              again before anyone pushes the next execution into it).
 *  x-twoshot   push reduce-scatter + push all-gather: COPY slice s of my IN into
 *              rank s's SCRATCH slot, SIGNAL s; WAIT; REDUCE my slice into OUT;
 *              COPY it into every peer's OUT, SIGNAL; WAIT.
 * Two more measure parts of a run and compute no allreduce (their check fails):
 *  x-barrier   one arrive per channel (SIGNAL every peer, WAIT): launch + barrier.
 *  x-local     COPY OUT <- IN per channel, no peers: launch + one local op.
 * Three more measure the executor's own cost per op (arsim calibrate; N in 1..60,
 * one staging window of the executor):
 *  x-chainN    channel 0 of every rank: N local COPY OUT <- IN of the whole count.
 *  x-rchainN   the same with N local REDUCEs OUT <- IN + SCRATCH slots, as many
 *              sources as a plan allows (nranks + 1, at most 8), which the executor
 *              loads two at a time: with 2 ranks, 3 sources in two groups.
 *  x-sigsN     two channels per rank: channel 1 SIGNALs the rank's own flag N
 *              times; channel 0 WAITs once for all N.
 *  x-waitsN    as x-sigsN, and channel 0 WAITs N times for all N (the flag is
 *              there from the second WAIT on: what a WAIT costs by itself).
 *  x-rsigsN    as x-sigsN, but channel 1 SIGNALs the next rank's flag: what a
 *              SIGNAL to another rank (another GPU, one rank per GPU) costs.
 *  x-msigsN    every channel SIGNALs its flag on the next rank N times, then WAITs for
 *              the previous rank's N: SIGNALs of many channels at once (--channels C).
 *  x-ringsN    every channel: N rounds of SIGNAL its flag on the next rank, WAIT for the
 *              previous rank's signal of that round: the ring's rounds without their
 *              data (--channels C), what its synchronisation alone costs.
 *  x-pairsN    every channel: N pairs of (COPY its part of IN into the next rank's
 *              SCRATCH, SIGNAL that rank), then WAIT for the previous rank's N: the
 *              (COPY, SIGNAL) pairs 1stage and 2stage chain, to one target.
 *  x-fpairsN   the same to rank r + nranks/2 (with ranks placed in blocks on two
 *              devices, always the other device).
 *  x-spairsN   the same into the rank's own SCRATCH and flag: a local COPY and a
 *              SIGNAL with nothing to cross (arsim calibrate: signal_fence_ns).
 *  x-fanN      x-spairsN on channel 0 with 8 SIGNALs after each COPY, to 8 distinct flags
 *              of the rank: a run the executor releases at once, one thread each; over
 *              x-spairsN's slope, what 7 more releases in a run cost (signal_together_ns).
 *  x-hchainN   N REDUCEs of IN and four HOST slots on channel 0 (three groups of loads,
 *              each with a host source): what a round of host loads costs.
 *  x-mchainN   x-chainN one element in (no pointer 16-byte aligned: the executor's
 *              scalar head and tail); x-mpairsN x-pairsN likewise.
 *  x-spinN     x-chainN on channel 0 while every other channel of the rank WAITs,
 *              spinning, for the SIGNAL channel 0 sends after its chain: what the
 *              executor's ops cost beside blocks that poll a flag (--channels C).
 * One more measures one channel's loads and stores in its own GPU's memory:
 *  x-reduce    every channel: REDUCE OUT <- IN + SCRATCH over its part, no flags.
 *  x-reducepush  the same REDUCE with its destination in the next rank's SCRATCH
 *              (local loads, peer stores: the ring's step), then SIGNAL, WAIT.
 * Two more tell whether a channel's local work overlaps its own peer stores:
 *  x-pushwork     every channel: x-pushsig's COPY into the next rank, then x-reduce's
 *                 REDUCE (on a second SCRATCH half), then SIGNAL and WAIT.
 *  x-pushsigwork  the same with the SIGNAL before the REDUCE (its release orders the
 *                 stores before the flag; does it wait for them to land?).
 * Three more isolate shapes the algorithms combine:
 *  x-pushall   every channel: COPY its part of IN into every peer's SCRATCH slot,
 *              SIGNAL each peer after its COPY, then WAIT for every peer (1stage's
 *              push phase, no REDUCE). x-pushsep: the same with a flag per sender and
 *              one WAIT per peer (2stage's).
 *  x-tsep      x-twoshot ordered as 2stage: a SIGNAL after each COPY, a flag per sender,
 *              a WAIT per peer; x-tsep1 / x-tsep2 / x-tsep3 batch the SIGNALs of the
 *              reduce-scatter / the all-gather / both after their COPYs.
 *  x-hostreduce  every channel: REDUCE OUT <- IN + the rank's HOST slot (a local and a
 *              host source in one op, as naive's); x-hostreduce2 IN + two HOST slots;
 *              x-hostpair two HOST slots (one group of two host sources).
 *  x-pullpush  even channels COPY their part of the next rank's IN into OUT (a pull),
 *              odd ones COPY their part of IN into the next rank's SCRATCH (a push):
 *              both directions of a link carry pulled and pushed data at once.
 *  x-pullpush1 the same on the odd ranks only: one GPU pulls and pushes, the other
 *              only serves (center_root's non-root against its root).
 * One more measures how fast one channel's peer stores land (arsim calibrate):
 *  x-storesig  channel 0 of every rank: COPY its IN into the next rank's SCRATCH,
 *              SIGNAL its own flag (the release fence waits for the stores to land),
 *              WAIT for it. Every rank at once, as 1stage pushes.
 * And how fast they land as the receiver sees them (1stage's shape without its REDUCE):
 *  x-pushsig   every channel of every rank: COPY its part of IN into the next rank's
 *              SCRATCH, SIGNAL the next rank's flag, WAIT for the previous rank's. */
#include <stdio.h>
#include <string.h>
#include "algorithms/internal.h"

/* Element range of part i of n parts of count, 8-element aligned (16 bytes in
 * the 2-byte types) except for the last part. */
static void part(uint64_t count, int n, int i, uint64_t *off, uint64_t *len) {
    uint64_t per = (count + (uint64_t)n - 1) / (uint64_t)n;
    per = (per + 7) & ~(uint64_t)7;
    uint64_t a = per * (uint64_t)i, b = a + per;
    if (a > count) a = count;
    if (b > count) b = count;
    *off = a;
    *len = b - a;
}

static int arrive(ar_plan_t *p, int r, int c, uint32_t flag) {
    for (int s = 0; s < p->nranks; s++)
        if (s != r) AR_TRY(ar_plan_signal(p, r, c, s, flag));
    return ar_plan_wait(p, r, c, flag, (uint64_t)(p->nranks - 1));
}

static int build_oneshot(ar_plan_t *p, int push) {
    const int n = p->nranks, C = p->nchannels;
    if (push) p->scratch_elems = p->count * (uint64_t)n;
    ar_addr_t srcs[65];
    for (int r = 0; r < n; r++)
        for (int c = 0; c < C; c++) {
            uint64_t off, len;
            part(p->count, C, c, &off, &len);
            if (!len) continue;
            if (push) {
                for (int s = 0; s < n; s++)
                    if (s != r)
                        AR_TRY(ar_plan_copy(p, r, c, ar_addr(s, AR_BUF_SCRATCH, (uint64_t)r * p->count + off),
                                            ar_addr(r, AR_BUF_IN, off), len));
                AR_TRY(arrive(p, r, c, (uint32_t)c));
                srcs[0] = ar_addr(r, AR_BUF_IN, off);
                int k = 1;
                for (int s = 0; s < n; s++)
                    if (s != r) srcs[k++] = ar_addr(r, AR_BUF_SCRATCH, (uint64_t)s * p->count + off);
                AR_TRY(ar_plan_reduce(p, r, c, ar_addr(r, AR_BUF_OUT, off), srcs, (uint32_t)k, len));
            } else {
                AR_TRY(arrive(p, r, c, (uint32_t)c));
                for (int s = 0; s < n; s++) srcs[s] = ar_addr((r + s) % n, AR_BUF_IN, off);
                AR_TRY(ar_plan_reduce(p, r, c, ar_addr(r, AR_BUF_OUT, off), srcs, (uint32_t)n, len));
            }
            AR_TRY(arrive(p, r, c, (uint32_t)(C + c)));
        }
    return AR_OK;
}

static int build_part(ar_plan_t *p, int barrier) {
    for (int r = 0; r < p->nranks; r++)
        for (int c = 0; c < p->nchannels; c++) {
            uint64_t off, len;
            part(p->count, p->nchannels, c, &off, &len);
            if (!len) continue;
            if (barrier) AR_TRY(arrive(p, r, c, (uint32_t)c));
            else AR_TRY(ar_plan_copy(p, r, c, ar_addr(r, AR_BUF_OUT, off), ar_addr(r, AR_BUF_IN, off), len));
        }
    return AR_OK;
}

/* x-storesig: one channel per rank. */
static int build_storesig(ar_plan_t *p, int unused) {
    (void)unused;
    const int n = p->nranks;
    p->scratch_elems = p->count;
    for (int r = 0; r < n; r++) {
        AR_TRY(ar_plan_copy(p, r, 0, ar_addr((r + 1) % n, AR_BUF_SCRATCH, 0), ar_addr(r, AR_BUF_IN, 0), p->count));
        AR_TRY(ar_plan_signal(p, r, 0, r, 0));
        AR_TRY(ar_plan_wait(p, r, 0, 0, 1));
    }
    return AR_OK;
}

/* x-pushsig: the flag of channel c is c. */
static int build_pushsig(ar_plan_t *p, int unused) {
    (void)unused;
    const int n = p->nranks;
    p->scratch_elems = p->count;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < p->nchannels; c++) {
            uint64_t off, len;
            part(p->count, p->nchannels, c, &off, &len);
            if (!len) continue;
            AR_TRY(ar_plan_copy(p, r, c, ar_addr((r + 1) % n, AR_BUF_SCRATCH, off), ar_addr(r, AR_BUF_IN, off), len));
            AR_TRY(ar_plan_signal(p, r, c, (r + 1) % n, (uint32_t)c));
            AR_TRY(ar_plan_wait(p, r, c, (uint32_t)c, 1));
        }
    return AR_OK;
}

/* x-reduce (push 0), x-reducepush (1): SCRATCH holds a second local source, and
 * for x-reducepush a second half for the previous rank's stores. */
static int build_reduce(ar_plan_t *p, int push) {
    p->scratch_elems = (push ? 2 : 1) * p->count;
    for (int r = 0; r < p->nranks; r++)
        for (int c = 0; c < p->nchannels; c++) {
            uint64_t off, len;
            part(p->count, p->nchannels, c, &off, &len);
            if (!len) continue;
            const ar_addr_t srcs[2] = {ar_addr(r, AR_BUF_IN, off), ar_addr(r, AR_BUF_SCRATCH, off)};
            const int to = (r + 1) % p->nranks;
            AR_TRY(ar_plan_reduce(p, r, c, push ? ar_addr(to, AR_BUF_SCRATCH, p->count + off) : ar_addr(r, AR_BUF_OUT, off),
                                  srcs, 2, len));
            if (!push) continue;
            AR_TRY(ar_plan_signal(p, r, c, to, (uint32_t)c));
            AR_TRY(ar_plan_wait(p, r, c, (uint32_t)c, 1));
        }
    return AR_OK;
}

/* x-pushwork (sig_first 0), x-pushsigwork (1): SCRATCH holds the pushed part, then
 * the REDUCE's second source. */
static int build_pushwork(ar_plan_t *p, int sig_first) {
    const int n = p->nranks;
    p->scratch_elems = 2 * p->count;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < p->nchannels; c++) {
            uint64_t off, len;
            part(p->count, p->nchannels, c, &off, &len);
            if (!len) continue;
            const int to = (r + 1) % n;
            const ar_addr_t srcs[2] = {ar_addr(r, AR_BUF_IN, off), ar_addr(r, AR_BUF_SCRATCH, p->count + off)};
            AR_TRY(ar_plan_copy(p, r, c, ar_addr(to, AR_BUF_SCRATCH, off), ar_addr(r, AR_BUF_IN, off), len));
            if (sig_first) AR_TRY(ar_plan_signal(p, r, c, to, (uint32_t)c));
            AR_TRY(ar_plan_reduce(p, r, c, ar_addr(r, AR_BUF_OUT, off), srcs, 2, len));
            if (!sig_first) AR_TRY(ar_plan_signal(p, r, c, to, (uint32_t)c));
            AR_TRY(ar_plan_wait(p, r, c, (uint32_t)c, 1));
        }
    return AR_OK;
}

/* x-twoshot (mode 7): in each phase, every COPY, then SIGNAL every peer on one flag of the
 * phase and WAIT for all (arrive). x-tsep (mode 0): as 2stage orders it, each COPY followed
 * by its SIGNAL, on a flag per sender, one WAIT per peer, in both phases; x-tsep1 batches
 * the SIGNALs of the reduce-scatter after its COPYs, x-tsep2 those of the all-gather,
 * x-tsep3 both (mode bits 1, 2; bit 4: one flag and arrive). */
static int build_twoshot(ar_plan_t *p, int mode) {
    const int n = p->nranks, C = p->nchannels;
    uint64_t soff[65] = {0}, slen[65] = {0};
    for (int s = 0; s < n; s++) part(p->count, n, s, &soff[s], &slen[s]);
    const uint64_t smax = slen[0];
    p->scratch_elems = smax * (uint64_t)n; /* slot q: rank q's copy of my slice */
    ar_addr_t srcs[65];
    for (int r = 0; r < n; r++)
        for (int c = 0; c < C; c++) {
            /* Channel c's share of every slice. */
            uint64_t coff[65], clen[65];
            int any = 0;
            for (int s = 0; s < n; s++) {
                part(slen[s], C, c, &coff[s], &clen[s]);
                any |= clen[s] != 0;
            }
            if (!any) continue;
            for (int phase = 0; phase < 2; phase++) {
                const uint32_t base = (uint32_t)(c * 2 * n + phase * n);
                const int batch = mode & (1 << phase);
                for (int d = 1; d < n; d++) {
                    const int s = (r + d) % n;
                    if (phase == 0)
                        AR_TRY(ar_plan_copy(p, r, c, ar_addr(s, AR_BUF_SCRATCH, (uint64_t)r * smax + coff[s]),
                                            ar_addr(r, AR_BUF_IN, soff[s] + coff[s]), clen[s]));
                    else
                        AR_TRY(ar_plan_copy(p, r, c, ar_addr(s, AR_BUF_OUT, soff[r] + coff[r]),
                                            ar_addr(r, AR_BUF_OUT, soff[r] + coff[r]), clen[r]));
                    if (!batch) AR_TRY(ar_plan_signal(p, r, c, s, base + (uint32_t)r));
                }
                if (mode & 4) {
                    AR_TRY(arrive(p, r, c, (uint32_t)(phase * C + c)));
                } else {
                    for (int d = 1; d < n && batch; d++)
                        AR_TRY(ar_plan_signal(p, r, c, (r + d) % n, base + (uint32_t)r));
                    for (int d = 1; d < n; d++) AR_TRY(ar_plan_wait(p, r, c, base + (uint32_t)((r + d) % n), 1));
                }
                if (phase == 1) break;
                srcs[0] = ar_addr(r, AR_BUF_IN, soff[r] + coff[r]);
                int k = 1;
                for (int q = 0; q < n; q++)
                    if (q != r) srcs[k++] = ar_addr(r, AR_BUF_SCRATCH, (uint64_t)q * smax + coff[r]);
                AR_TRY(ar_plan_reduce(p, r, c, ar_addr(r, AR_BUF_OUT, soff[r] + coff[r]), srcs, (uint32_t)k, clen[r]));
            }
        }
    return AR_OK;
}

/* x-pushall (sep 0): slot r of a peer's SCRATCH holds rank r's part; x-pushsep (sep 1):
 * each SIGNAL on the sender's own flag of the channel, one WAIT per peer (2stage's). */
static int build_pushall(ar_plan_t *p, int sep) {
    const int n = p->nranks;
    p->scratch_elems = (uint64_t)n * p->count;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < p->nchannels; c++) {
            uint64_t off, len;
            part(p->count, p->nchannels, c, &off, &len);
            if (!len) continue;
            for (int k = 1; k < n; k++) {
                const int q = (r + k) % n;
                AR_TRY(ar_plan_copy(p, r, c, ar_addr(q, AR_BUF_SCRATCH, (uint64_t)r * p->count + off),
                                    ar_addr(r, AR_BUF_IN, off), len));
                AR_TRY(ar_plan_signal(p, r, c, q, sep ? (uint32_t)(c * n + r) : (uint32_t)c));
            }
            if (sep)
                for (int k = 1; k < n; k++) AR_TRY(ar_plan_wait(p, r, c, (uint32_t)(c * n + (r + k) % n), 1));
            else if (n > 1)
                AR_TRY(ar_plan_wait(p, r, c, (uint32_t)c, (uint64_t)(n - 1)));
        }
    return AR_OK;
}

/* x-hostreduce (kind 0: IN + one HOST slot), x-hostreduce2 (1: IN + two), x-hostpair
 * (2: two HOST slots): HOST slots 2r and 2r + 1 are rank r's. */
static int build_hostreduce(ar_plan_t *p, int kind) {
    p->host_elems = 2 * (uint64_t)p->nranks * p->count;
    for (int r = 0; r < p->nranks; r++)
        for (int c = 0; c < p->nchannels; c++) {
            uint64_t off, len;
            part(p->count, p->nchannels, c, &off, &len);
            if (!len) continue;
            ar_addr_t srcs[3];
            uint32_t k = 0;
            if (kind != 2) srcs[k++] = ar_addr(r, AR_BUF_IN, off);
            for (int h = 0; h < (kind == 0 ? 1 : 2); h++)
                srcs[k++] = ar_addr(AR_RANK_HOST, AR_BUF_IN, (uint64_t)(2 * r + h) * p->count + off);
            AR_TRY(ar_plan_reduce(p, r, c, ar_addr(r, AR_BUF_OUT, off), srcs, k, len));
        }
    return AR_OK;
}

/* x-pullpush (one_sided 0), x-pullpush1 (1: odd ranks only): channels split in pairs;
 * part() over the pairs. */
static int build_pullpush(ar_plan_t *p, int one_sided) {
    const int n = p->nranks, pairs = (p->nchannels + 1) / 2;
    p->scratch_elems = p->count;
    for (int r = one_sided; r < n; r += 1 + one_sided)
        for (int c = 0; c < p->nchannels; c++) {
            uint64_t off, len;
            part(p->count, pairs, c / 2, &off, &len);
            if (!len) continue;
            const int to = (r + 1) % n;
            if (c % 2 == 0) AR_TRY(ar_plan_copy(p, r, c, ar_addr(r, AR_BUF_OUT, off), ar_addr(to, AR_BUF_IN, off), len));
            else AR_TRY(ar_plan_copy(p, r, c, ar_addr(to, AR_BUF_SCRATCH, off), ar_addr(r, AR_BUF_IN, off), len));
        }
    return AR_OK;
}

/* x-chainN, x-sigsN, x-waitsN, x-rsigsN, x-spinN, x-msigsN, x-ringsN, x-rchainN,
 * x-pairsN, x-fpairsN, x-spairsN, x-mchainN, x-mpairsN, x-hchainN, x-fanN (kind 0 .. 14). */
static int build_exec(ar_plan_t *p, int kind, int n) {
    const int ksrc = p->nranks + 1 < 8 ? p->nranks + 1 : 8;
    if (kind == 7) p->scratch_elems = (uint64_t)(ksrc - 1) * p->count;
    if (kind >= 8) p->scratch_elems = p->count;
    /* x-mchainN, x-mpairsN: every range one element in, so no pointer is 16-byte aligned */
    const uint64_t skew = (kind == 11 || kind == 12) && p->count > 1 ? 1 : 0;
    if (kind == 13) p->host_elems = 4 * (uint64_t)p->nranks * p->count;
    for (int r = 0; r < p->nranks; r++) {
        if (kind == 13) { /* x-rchainN's shape with four of its five sources in host memory */
            ar_addr_t srcs[5];
            srcs[0] = ar_addr(r, AR_BUF_IN, 0);
            for (int h = 0; h < 4; h++) srcs[1 + h] = ar_addr(AR_RANK_HOST, AR_BUF_IN, (uint64_t)(4 * r + h) * p->count);
            for (int i = 0; i < n; i++) AR_TRY(ar_plan_reduce(p, r, 0, ar_addr(r, AR_BUF_OUT, 0), srcs, 5, p->count));
            continue;
        }
        if (kind == 14) { /* x-fanN: N rounds of a local COPY and a run of AR_PROBE_FAN_FLAGS SIGNALs */
            for (int i = 0; i < n; i++) {
                AR_TRY(ar_plan_copy(p, r, 0, ar_addr(r, AR_BUF_SCRATCH, 0), ar_addr(r, AR_BUF_IN, 0), p->count));
                for (uint32_t f = 0; f < AR_PROBE_FAN_FLAGS; f++) AR_TRY(ar_plan_signal(p, r, 0, r, f));
            }
            for (uint32_t f = 0; f < AR_PROBE_FAN_FLAGS; f++) AR_TRY(ar_plan_wait(p, r, 0, f, (uint64_t)n));
            continue;
        }
        if (kind == 11) {
            for (int i = 0; i < n; i++)
                AR_TRY(ar_plan_copy(p, r, 0, ar_addr(r, AR_BUF_OUT, skew), ar_addr(r, AR_BUF_IN, skew), p->count - skew));
            continue;
        }
        if (kind >= 8) {
            const int to = (r + (kind == 8 || kind == 12 ? 1 : kind == 9 ? p->nranks / 2 : 0)) % p->nranks;
            for (int c = 0; c < p->nchannels; c++) {
                uint64_t off, len;
                part(p->count, p->nchannels, c, &off, &len);
                if (len <= skew) continue;
                off += skew;
                len -= skew;
                for (int i = 0; i < n; i++) {
                    AR_TRY(ar_plan_copy(p, r, c, ar_addr(to, AR_BUF_SCRATCH, off), ar_addr(r, AR_BUF_IN, off), len));
                    AR_TRY(ar_plan_signal(p, r, c, to, (uint32_t)c));
                }
                AR_TRY(ar_plan_wait(p, r, c, (uint32_t)c, (uint64_t)n));
            }
            continue;
        }
        if (kind == 7) {
            ar_addr_t srcs[8];
            srcs[0] = ar_addr(r, AR_BUF_IN, 0);
            for (int k = 1; k < ksrc; k++) srcs[k] = ar_addr(r, AR_BUF_SCRATCH, (uint64_t)(k - 1) * p->count);
            for (int i = 0; i < n; i++)
                AR_TRY(ar_plan_reduce(p, r, 0, ar_addr(r, AR_BUF_OUT, 0), srcs, (uint32_t)ksrc, p->count));
            continue;
        }
        if (kind == 6) {
            for (int c = 0; c < p->nchannels; c++)
                for (int i = 0; i < n; i++) {
                    AR_TRY(ar_plan_signal(p, r, c, (r + 1) % p->nranks, (uint32_t)c));
                    AR_TRY(ar_plan_wait(p, r, c, (uint32_t)c, (uint64_t)i + 1));
                }
            continue;
        }
        if (kind == 5) {
            for (int c = 0; c < p->nchannels; c++) {
                for (int i = 0; i < n; i++) AR_TRY(ar_plan_signal(p, r, c, (r + 1) % p->nranks, (uint32_t)c));
                AR_TRY(ar_plan_wait(p, r, c, (uint32_t)c, (uint64_t)n));
            }
            continue;
        }
        if (kind == 4) {
            for (int i = 0; i < n; i++)
                AR_TRY(ar_plan_copy(p, r, 0, ar_addr(r, AR_BUF_OUT, 0), ar_addr(r, AR_BUF_IN, 0), p->count));
            AR_TRY(ar_plan_signal(p, r, 0, r, 0));
            for (int c = 1; c < p->nchannels; c++) AR_TRY(ar_plan_wait(p, r, c, 0, 1));
            continue;
        }
        if (kind == 0) {
            for (int i = 0; i < n; i++)
                AR_TRY(ar_plan_copy(p, r, 0, ar_addr(r, AR_BUF_OUT, 0), ar_addr(r, AR_BUF_IN, 0), p->count));
            continue;
        }
        const int to = kind == 3 ? (r + 1) % p->nranks : r;
        for (int i = 0; i < n; i++) AR_TRY(ar_plan_signal(p, r, 1, to, 0));
        for (int i = 0; i < (kind == 2 ? n : 1); i++) AR_TRY(ar_plan_wait(p, r, 0, 0, (uint64_t)n));
    }
    return AR_OK;
}

/* The probes, as entries of the algorithm table (ar_algo_probe): a builder, its
 * argument, and whether it takes one channel whatever was asked. */
typedef struct probe_s {
    ar_algo_t algo; /* first: the table hands out &probe->algo */
    int (*build)(ar_plan_t *p, int arg);
    int arg, one_channel;
} probe_t;

#define PROBE(nm, sum, fn, a, one) {{.name = nm, .summary = sum, .probe = 1}, fn, a, one}
static const probe_t fixed[] = {
    PROBE("x-oneshot", "pull one-shot: barrier, REDUCE every peer's IN, barrier", build_oneshot, 0, 0),
    PROBE("x-pushshot", "push one-shot: COPY IN into every peer's SCRATCH, SIGNAL, REDUCE", build_oneshot, 1, 0),
    PROBE("x-twoshot", "push reduce-scatter + all-gather, each phase's SIGNALs on one flag", build_twoshot, 7, 0),
    PROBE("x-barrier", "one barrier per channel: launch + barrier (no allreduce)", build_part, 1, 0),
    PROBE("x-local", "COPY OUT <- IN per channel, no peers (no allreduce)", build_part, 0, 0),
    PROBE("x-storesig", "one channel: COPY into the next rank, SIGNAL its own flag: stores landing", build_storesig, 0, 1),
    PROBE("x-pushsig", "COPY into the next rank, SIGNAL it, WAIT for the previous one", build_pushsig, 0, 0),
    PROBE("x-reduce", "REDUCE OUT <- IN + SCRATCH per channel, no flags: local loads", build_reduce, 0, 0),
    PROBE("x-pushwork", "x-pushsig's COPY, then x-reduce's REDUCE, then SIGNAL, WAIT", build_pushwork, 0, 0),
    PROBE("x-pushsigwork", "x-pushwork with the SIGNAL before the REDUCE", build_pushwork, 1, 0),
    PROBE("x-pushall", "COPY into every peer's SCRATCH, SIGNAL each, WAIT (1stage's push phase)", build_pushall, 0, 0),
    PROBE("x-hostreduce", "REDUCE OUT <- IN + one HOST slot (naive's shape)", build_hostreduce, 0, 0),
    PROBE("x-pullpush", "even channels pull from, odd ones push to the next rank at once", build_pullpush, 0, 0),
    PROBE("x-reducepush", "x-reduce with its destination in the next rank's SCRATCH", build_reduce, 1, 0),
    PROBE("x-pullpush1", "x-pullpush on odd ranks only: one device pulls and pushes", build_pullpush, 1, 0),
    PROBE("x-hostreduce2", "REDUCE OUT <- IN + two HOST slots", build_hostreduce, 1, 0),
    PROBE("x-hostpair", "REDUCE OUT <- two HOST slots (one group of host loads)", build_hostreduce, 2, 0),
    PROBE("x-pushsep", "x-pushall with a flag per sender and a WAIT per peer (2stage's)", build_pushall, 1, 0),
    PROBE("x-tsep", "x-twoshot ordered as 2stage: a SIGNAL after each COPY, a flag per sender", build_twoshot, 0, 0),
    PROBE("x-tsep1", "x-tsep with the reduce-scatter's SIGNALs batched", build_twoshot, 1, 0),
    PROBE("x-tsep2", "x-tsep with the all-gather's SIGNALs batched", build_twoshot, 2, 0),
    PROBE("x-tsep3", "x-tsep with both phases' SIGNALs batched", build_twoshot, 3, 0),
};

/* The probes named with a count N (x-chainN ...): build_exec's kind is the index,
 * arg the channels they take (0 = as asked). */
static const probe_t counted[] = {
    PROBE("x-chainN", "channel 0: N local COPYs (the executor's cost per op)", NULL, 1, 0),
    PROBE("x-sigsN", "one channel SIGNALs its rank's flag N times, another WAITs once", NULL, 2, 0),
    PROBE("x-waitsN", "x-sigsN with N WAITs (what a WAIT costs by itself)", NULL, 2, 0),
    PROBE("x-rsigsN", "x-sigsN to the next rank's flag (a SIGNAL across)", NULL, 2, 0),
    PROBE("x-spinN", "x-chainN while the rank's other channels spin in a WAIT", NULL, 0, 0),
    PROBE("x-msigsN", "every channel SIGNALs the next rank N times, then WAITs", NULL, 0, 0),
    PROBE("x-ringsN", "N rounds of SIGNAL the next rank, WAIT for the previous (no data)", NULL, 0, 0),
    PROBE("x-rchainN", "channel 0: N local REDUCEs of up to 8 sources (groups of loads)", NULL, 1, 0),
    PROBE("x-pairsN", "N (COPY into the next rank, SIGNAL it) pairs, then WAIT", NULL, 0, 0),
    PROBE("x-fpairsN", "x-pairsN to rank r + nranks/2 (the other device)", NULL, 0, 0),
    PROBE("x-spairsN", "x-pairsN into the rank's own SCRATCH and flag (the fence alone)", NULL, 0, 0),
    PROBE("x-mchainN", "x-chainN one element in (no 16-byte aligned pointer)", NULL, 1, 0),
    PROBE("x-mpairsN", "x-pairsN one element in", NULL, 0, 0),
    PROBE("x-hchainN", "channel 0: N REDUCEs of IN and four HOST slots (rounds of host loads)", NULL, 1, 0),
    PROBE("x-fanN", "x-spairsN with 8 SIGNALs to distinct flags after each COPY (a run released at once)", NULL, 1, 0),
};
#undef PROBE

#define NFIXED (int)(sizeof fixed / sizeof fixed[0])
#define NCOUNTED (int)(sizeof counted / sizeof counted[0])

int ar_algo_probe_count(void) { return NFIXED + NCOUNTED; }

const ar_algo_t *ar_algo_probe(int i) {
    if (i < 0 || i >= NFIXED + NCOUNTED) return NULL;
    return i < NFIXED ? &fixed[i].algo : &counted[i - NFIXED].algo;
}

/* Which probe `name` is: *fi (fixed) or *ci (counted, *n its N, 0 when out of 1..60), else both -1. */
static void probe_lookup(const char *name, int *fi, int *ci, int *n) {
    *fi = *ci = -1;
    *n = 0;
    for (int i = 0; i < NFIXED; i++)
        if (!strcmp(name, fixed[i].algo.name)) {
            *fi = i;
            return;
        }
    for (int i = 0; i < NCOUNTED; i++) {
        const size_t l = strlen(counted[i].algo.name) - 1; /* the name without its N */
        char tail = 0;
        int v = 0;
        if (!strncmp(name, counted[i].algo.name, l) && name[l] >= '0' && name[l] <= '9' &&
            sscanf(name + l, "%d%c", &v, &tail) == 1) {
            *ci = i;
            *n = v >= 1 && v <= 60 ? v : 0;
            return;
        }
    }
}

const ar_algo_t *ar__probe_find(const char *name) {
    int fi, ci, n;
    probe_lookup(name, &fi, &ci, &n);
    return fi >= 0 ? &fixed[fi].algo : ci >= 0 ? &counted[ci].algo : NULL;
}

int ar__probe_build(const char *name, int nranks, uint64_t count, ar_dtype_t dtype, int channels, ar_plan_t **out,
                    ar_error_t *err) {
    int fi, ci, nexec;
    probe_lookup(name, &fi, &ci, &nexec);
    if (ci >= 0 && nexec == 0) return AR_ERR(err, AR_EINVAL, "probe plan '%s': N must be 1..60", name);
    if (fi < 0 && ci < 0) {
        char known[512] = "";
        size_t at = 0;
        for (int i = 0; i < NFIXED + NCOUNTED && at + 2 < sizeof known; i++)
            at += (size_t)snprintf(known + at, sizeof known - at, "%s%s", at ? ", " : "", ar_algo_probe(i)->name);
        return AR_ERR(err, AR_EINVAL, "unknown probe plan '%s' (%s)", name, known);
    }
    if (nranks < 1 || nranks > 64) return AR_ERR(err, AR_ELIMIT, "probe plans take 1 to 64 ranks");
    if (ci >= 0 && counted[ci].arg) channels = counted[ci].arg;
    if (channels < 1 || (fi >= 0 && fixed[fi].one_channel)) channels = 1;
    ar_plan_t *p = NULL;
    int rc = ar_plan_new(name, nranks, channels, count, dtype, &p);
    if (rc != AR_OK) return AR_ERR(err, rc, "probe plan %s: %s", name, ar_strerror(rc));
    rc = fi >= 0 ? fixed[fi].build(p, fixed[fi].arg) : build_exec(p, ci, nexec);
    if (rc == AR_OK) rc = ar_plan_finish(p);
    if (rc != AR_OK) {
        ar_plan_free(p);
        return AR_ERR(err, rc, "probe plan %s: %s", name, ar_strerror(rc));
    }
    *out = p;
    return AR_OK;
}
