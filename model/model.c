/* Hardware models: model/<name>.yaml.
 *
 * Format (every key is required unless marked optional; units are in the key):
 *
 *   name: h200_sxm                 # optional, defaults to the file's base name
 *   description: "..."             # optional
 *   clock_ghz: 1.98                # ns -> cycles for reporting
 *   memory:                        # all three levels, fastest first
 *     tcm:  {present: false}       # a level the device does not have
 *     sram: {capacity_bytes: ..., read_gbps: ..., write_gbps: ..., lat_ns: ...}
 *     hbm:  {capacity_bytes: ..., read_gbps: ..., write_gbps: ..., lat_ns: ...}
 *   links:                         # link kinds; the first is the builders' default
 *     - {name: nvlink4, bw_gbps: 26.562, lat_ns: 300}   # one link, one direction
 *   reduce_gbps: ...               # per channel, bytes of output per second
 *   chan_inflight_bytes: ...       # per channel, remote-read bytes in flight
 *   chan_read_lat_ns: ...          # per channel, remote-read round trip
 *   chan_write_gbps: ...           # per channel, posted remote stores
 *   signal_lat_ns: ...             # SIGNAL to visible at the waiter, one way
 *   signal_lat_local_ns: ...       # optional (0 = signal_lat_ns): the same inside one device
 *   launch_ns: ...                 # starting one plan execution
 *   launch_block_ns: ...           # optional (0): each executor block of a launch starts this
 *                                  # much after the one before it on its device
 *   link_issue_gbps: ...           # optional (0 = none): one device's channels' pulls and
 *                                  # pushes together, bytes per second over all its links
 *   host_link_gbps: ...            # device <-> host staging (naive), one direction
 *   host_link_lat_ns: ...
 *   op_overhead_ns: ...            # optional (0): executor cost per COPY/REDUCE, per channel
 *   wait_overhead_ns: ...          # optional (0): executor cost per WAIT, per channel
 *   host_chan_read_gbps: ...       # optional (0 = none): one channel's rate loading host memory
 *   host_chan_write_gbps: ...      # optional (0 = none): one channel's rate storing to host memory
 *   host_chan_read_pair_gbps: ...  # optional (0 = host_chan_read_gbps): the same loading two host
 *                                  # sources of one executor group at once
 *   chan_write_land_gbps: ...      # optional (0 = none): rate one channel's peer stores land
 *                                  # (a SIGNAL's release fence waits for them)
 *   signal_release_ns: ...        # optional (0): executor cost per SIGNAL, on the sender
 *   signal_release_remote_ns: ...  # optional (0 = signal_release_ns): the same, flag on another device
 *   signal_release_chan_ns: ...    # optional (0): a SIGNAL's release takes this x log2(n) more
 *                                  # at least, n its device's channels whose latest op crosses
 *   signal_fence_ns: ...           # optional (0): a SIGNAL's release fence takes this at least,
 *                                  # however long ago the channel's writes were issued
 *   reduce_group_ns: ...           # optional (0): each group of two sources of a REDUCE after
 *                                  # the first keeps its channel at least this long
 *   reduce_op_ns: ...              # optional (0): a REDUCE costs the executor this more than a
 *                                  # COPY of the same bytes, whatever its sources
 *   chan_local_read_gbps: ...      # optional (0 = none): one channel's loads from its own
 *                                  # device's memory per second
 *   chan_local_read_push_gbps: ... # optional (0 = chan_local_read_gbps): the same for an op
 *                                  # whose destination is on another device
 *   op_misalign_ns: ...            # optional (0): a COPY/REDUCE out of 16-byte line costs this more
 *   cold_lat_ns: ...               # optional (0): an op loading bytes its device has not touched
 *                                  # within the L2's capacity of traffic waits this more
 *
 * Every bandwidth, latency, clock and capacity must be a positive finite number
 * (AR_EMODEL otherwise); unknown keys and wrong types are AR_EPARSE. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/internal.h"

#define MAX_LINK_KINDS 32

static const char *const shipped_models[] = {"h100_sxm", "h200_sxm", "accel_tcm", NULL};

const char *const *ar_model_shipped(void) { return shipped_models; }

const char *ar_model_dir(void) {
    static char buf[1024];
    const char *env = getenv("ARSIM_DATADIR");
    snprintf(buf, sizeof buf, "%s/model", env && env[0] ? env : ARSIM_DATADIR);
    return buf;
}

double ar_model_chan_read_gbps(const ar_model_t *m) {
    /* Little's law: bytes in flight / round trip, bytes per ns = GB/s. */
    return m->chan_read_lat_ns > 0 ? m->chan_inflight_bytes / m->chan_read_lat_ns : 0;
}

int ar_model_link_kind(const ar_model_t *m, const char *name) {
    for (int i = 0; i < m->nlinks; i++)
        if (strcmp(m->links[i].name, name) == 0) return i;
    return -1;
}

void ar_model_free(ar_model_t *m) {
    if (!m) return;
    free(m->links);
    free(m);
}

static int looks_like_path(const char *s) {
    size_t n = strlen(s);
    return strchr(s, '/') || (n > 5 && strcmp(s + n - 5, ".yaml") == 0) ||
           (n > 4 && strcmp(s + n - 4, ".yml") == 0);
}

int ar__model_resolve(const char *name_or_path, char *path, size_t len) {
    if (looks_like_path(name_or_path)) {
        snprintf(path, len, "%s", name_or_path);
        return 1;
    }
    snprintf(path, len, "%s/%s.yaml", ar_model_dir(), name_or_path);
    return access(path, R_OK) == 0;
}

static int req(const ar__ydoc_t *d, const ar__ynode_t *map, const char *ctx, const char *key,
               ar__ynode_t **out, ar_error_t *err) {
    *out = ar__y_get(map, key);
    if (*out) return AR_OK;
    char field[160];
    snprintf(field, sizeof field, "%s%s%s", ctx, ctx[0] ? "." : "", key);
    return ar__y_error(err, d, map, AR_EPARSE, field, "missing");
}

static int req_pos(const ar__ydoc_t *d, const ar__ynode_t *map, const char *ctx, const char *key,
                   double *out, ar_error_t *err) {
    ar__ynode_t *n;
    AR_TRY(req(d, map, ctx, key, &n, err));
    char field[160];
    snprintf(field, sizeof field, "%s%s%s", ctx, ctx[0] ? "." : "", key);
    return ar__y_positive(d, n, field, AR_EMODEL, out, err);
}

/* An optional non-negative number (0 when the key is absent): a cost the model may leave out. */
static int opt_nonneg(const ar__ydoc_t *d, const ar__ynode_t *map, const char *key, double *out,
                      ar_error_t *err) {
    ar__ynode_t *n = ar__y_get(map, key);
    *out = 0;
    if (!n) return AR_OK;
    AR_TRY(ar__y_number(d, n, key, out, err));
    if (!(*out >= 0) || *out > 1e15)
        return ar__y_error(err, d, n, AR_EMODEL, key, "must be a finite number >= 0 (got %g)", *out);
    return AR_OK;
}

static int parse_level(const ar__ydoc_t *d, const ar__ynode_t *mem, ar_mem_t lvl,
                       ar_mem_level_t *out, ar_error_t *err) {
    static const char *const keys[] = {"present", "capacity_bytes", "read_gbps", "write_gbps",
                                       "lat_ns", NULL};
    char ctx[64];
    snprintf(ctx, sizeof ctx, "memory.%s", ar_mem_name(lvl));
    ar__ynode_t *n;
    AR_TRY(req(d, mem, "memory", ar_mem_name(lvl), &n, err));
    AR_TRY(ar__y_check_keys(d, n, keys, ctx, err));
    int present = 1;
    ar__ynode_t *p = ar__y_get(n, "present");
    if (p) {
        char field[80];
        snprintf(field, sizeof field, "%s.present", ctx);
        AR_TRY(ar__y_bool(d, p, field, &present, err));
    }
    memset(out, 0, sizeof *out);
    if (!present) {
        if (n->n > 2)
            return ar__y_error(err, d, n->items[n->items[0] == p ? 2 : 0], AR_EPARSE, ctx,
                               "a level with present: false takes no other keys");
        return AR_OK;
    }
    out->present = 1;
    AR_TRY(req_pos(d, n, ctx, "capacity_bytes", &out->capacity_bytes, err));
    AR_TRY(req_pos(d, n, ctx, "read_gbps", &out->read_gbps, err));
    AR_TRY(req_pos(d, n, ctx, "write_gbps", &out->write_gbps, err));
    AR_TRY(req_pos(d, n, ctx, "lat_ns", &out->lat_ns, err));
    return AR_OK;
}

static int parse_model(const ar__ydoc_t *d, const char *default_name, ar_model_t **out,
                       ar_error_t *err) {
    static const char *const keys[] = {
        "name", "description", "clock_ghz", "memory", "links", "reduce_gbps",
        "chan_inflight_bytes", "chan_read_lat_ns", "chan_write_gbps", "signal_lat_ns", "signal_lat_local_ns",
        "launch_ns", "launch_block_ns", "link_issue_gbps", "host_link_gbps", "host_link_lat_ns", "op_overhead_ns", "wait_overhead_ns",
        "host_chan_read_gbps", "host_chan_write_gbps", "host_chan_read_pair_gbps",
        "chan_write_land_gbps", "signal_release_ns", "signal_release_remote_ns", "signal_release_chan_ns",
        "signal_fence_ns", "chan_local_read_gbps", "chan_local_read_push_gbps", "op_misalign_ns", "reduce_group_ns",
        "reduce_op_ns", "cold_lat_ns", NULL};
    static const char *const mem_keys[] = {"tcm", "sram", "hbm", NULL};
    static const char *const link_keys[] = {"name", "bw_gbps", "lat_ns", NULL};
    const ar__ynode_t *root = d->root;
    if (!root) return ar__y_error(err, d, NULL, AR_EPARSE, "model", "empty document");
    AR_TRY(ar__y_check_keys(d, root, keys, "", err));

    ar_model_t *m = calloc(1, sizeof *m);
    if (!m) return AR_ERR(err, AR_ENOMEM, "out of memory");
    int rc = AR_OK;
    snprintf(m->path, sizeof m->path, "%s", d->label);
    ar__ynode_t *n;
    const char *s;
    if ((n = ar__y_get(root, "name"))) {
        AR_TRY_GOTO(ar__y_string(d, n, "name", AR_NAME_MAX, &s, err), rc, fail);
        snprintf(m->name, sizeof m->name, "%s", s);
    } else {
        snprintf(m->name, sizeof m->name, "%s", default_name);
    }
    if ((n = ar__y_get(root, "description")))
        AR_TRY_GOTO(ar__y_string(d, n, "description", 1024, &s, err), rc, fail);
    AR_TRY_GOTO(req_pos(d, root, "", "clock_ghz", &m->clock_ghz, err), rc, fail);

    AR_TRY_GOTO(req(d, root, "", "memory", &n, err), rc, fail);
    AR_TRY_GOTO(ar__y_check_keys(d, n, mem_keys, "memory", err), rc, fail);
    int any = 0;
    for (int l = 0; l < AR_NMEM; l++) {
        AR_TRY_GOTO(parse_level(d, n, (ar_mem_t)l, &m->mem[l], err), rc, fail);
        any |= m->mem[l].present;
    }
    if (!any) {
        rc = ar__y_error(err, d, n, AR_EMODEL, "memory", "no level is present");
        goto fail;
    }

    AR_TRY_GOTO(req(d, root, "", "links", &n, err), rc, fail);
    AR_TRY_GOTO(ar__y_expect(d, n, AR__Y_SEQ, "links", err), rc, fail);
    if (n->n == 0 || n->n > MAX_LINK_KINDS) {
        rc = ar__y_error(err, d, n, AR_EMODEL, "links", "between 1 and %d link kinds expected",
                         MAX_LINK_KINDS);
        goto fail;
    }
    m->links = calloc((size_t)n->n, sizeof *m->links);
    if (!m->links) { rc = AR_ERR(err, AR_ENOMEM, "out of memory"); goto fail; }
    for (int i = 0; i < n->n; i++) {
        const ar__ynode_t *lk = n->items[i];
        char ctx[64], field[80];
        snprintf(ctx, sizeof ctx, "links[%d]", i);
        AR_TRY_GOTO(ar__y_check_keys(d, lk, link_keys, ctx, err), rc, fail);
        ar__ynode_t *nm;
        AR_TRY_GOTO(req(d, lk, ctx, "name", &nm, err), rc, fail);
        snprintf(field, sizeof field, "%s.name", ctx);
        AR_TRY_GOTO(ar__y_string(d, nm, field, AR_NAME_MAX, &s, err), rc, fail);
        if (ar_model_link_kind(m, s) >= 0) {
            rc = ar__y_error(err, d, nm, AR_EMODEL, field, "duplicate link kind '%s'", s);
            goto fail;
        }
        ar_link_kind_t *k = &m->links[i];
        AR_TRY_GOTO(req_pos(d, lk, ctx, "bw_gbps", &k->bw_gbps, err), rc, fail);
        AR_TRY_GOTO(req_pos(d, lk, ctx, "lat_ns", &k->lat_ns, err), rc, fail);
        snprintf(k->name, sizeof k->name, "%s", s);
        m->nlinks = i + 1;
    }

    AR_TRY_GOTO(req_pos(d, root, "", "reduce_gbps", &m->reduce_gbps, err), rc, fail);
    AR_TRY_GOTO(req_pos(d, root, "", "chan_inflight_bytes", &m->chan_inflight_bytes, err), rc, fail);
    AR_TRY_GOTO(req_pos(d, root, "", "chan_read_lat_ns", &m->chan_read_lat_ns, err), rc, fail);
    AR_TRY_GOTO(req_pos(d, root, "", "chan_write_gbps", &m->chan_write_gbps, err), rc, fail);
    AR_TRY_GOTO(req_pos(d, root, "", "signal_lat_ns", &m->signal_lat_ns, err), rc, fail);
    AR_TRY_GOTO(req_pos(d, root, "", "launch_ns", &m->launch_ns, err), rc, fail);
    AR_TRY_GOTO(req_pos(d, root, "", "host_link_gbps", &m->host_link_gbps, err), rc, fail);
    AR_TRY_GOTO(req_pos(d, root, "", "host_link_lat_ns", &m->host_link_lat_ns, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "signal_lat_local_ns", &m->signal_lat_local_ns, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "launch_block_ns", &m->launch_block_ns, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "link_issue_gbps", &m->link_issue_gbps, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "op_overhead_ns", &m->op_overhead_ns, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "wait_overhead_ns", &m->wait_overhead_ns, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "host_chan_read_gbps", &m->host_chan_read_gbps, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "host_chan_write_gbps", &m->host_chan_write_gbps, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "host_chan_read_pair_gbps", &m->host_chan_read_pair_gbps, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "chan_write_land_gbps", &m->chan_write_land_gbps, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "signal_release_ns", &m->signal_release_ns, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "signal_release_remote_ns", &m->signal_release_remote_ns, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "signal_release_chan_ns", &m->signal_release_chan_ns, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "signal_fence_ns", &m->signal_fence_ns, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "chan_local_read_gbps", &m->chan_local_read_gbps, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "chan_local_read_push_gbps", &m->chan_local_read_push_gbps, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "op_misalign_ns", &m->op_misalign_ns, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "reduce_group_ns", &m->reduce_group_ns, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "reduce_op_ns", &m->reduce_op_ns, err), rc, fail);
    AR_TRY_GOTO(opt_nonneg(d, root, "cold_lat_ns", &m->cold_lat_ns, err), rc, fail);
    *out = m;
    return AR_OK;
fail:
    ar_model_free(m);
    return rc;
}

static void base_name(const char *path, char *out, size_t len) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(out, len, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = '\0';
}

int ar_model_load_string(const char *yaml, const char *label, ar_model_t **out, ar_error_t *err) {
    *out = NULL;
    ar__ydoc_t *d;
    AR_TRY(ar__ydoc_load_string(yaml, strlen(yaml), label, &d, err));
    char nm[AR_NAME_MAX];
    base_name(d->label, nm, sizeof nm);
    int rc = parse_model(d, nm, out, err);
    ar__ydoc_free(d);
    return rc;
}

int ar_model_load(const char *name_or_path, ar_model_t **out, ar_error_t *err) {
    *out = NULL;
    if (!name_or_path || !name_or_path[0]) return AR_ERR(err, AR_EMODEL, "model: empty name");
    char path[1024];
    if (!ar__model_resolve(name_or_path, path, sizeof path))
        return AR_ERR(err, AR_EMODEL, "model: unknown model '%s' (shipped: h100_sxm, h200_sxm, "
                      "accel_tcm; or a path to a .yaml file)", name_or_path);
    ar__ydoc_t *d;
    AR_TRY(ar__ydoc_load_file(path, &d, err));
    char nm[AR_NAME_MAX];
    base_name(path, nm, sizeof nm);
    int rc = parse_model(d, nm, out, err);
    ar__ydoc_free(d);
    return rc;
}
