/* Topology YAML files.
 *
 * A topology is either built:
 *
 *   name: torus_2d_2x3            # optional, defaults to the file's base name
 *   description: "..."            # optional
 *   model: accel_tcm              # optional: shipped model name, or a path (relative
 *                                 # to this file); default as for SPECs (topologies/topo.c)
 *   builder:                      # exactly one of ring_1d, torus_2d, mesh_2d, full, switch
 *     torus_2d: {w: 2, h: 3}      # ring_1d/full/switch take {n: N}
 *                                 # optional in each: link: KIND (default the model's
 *                                 # first link kind), count: C (default 1)
 *
 * or listed:
 *
 *   model: h100_sxm
 *   devices: [gpu0, gpu1, ...]    # names, or a count N (named d0..d(N-1))
 *   switches: [nvswitch]          # optional: names, or a count (sw0..)
 *   links:                        # bundles, full duplex
 *     - {a: gpu0, b: nvswitch, kind: nvlink4, count: 18}   # kind, count optional
 *
 * and in both forms, optionally:
 *
 *   ranks: 16                     # ranks in total; without placement, placed in
 *                                 # contiguous blocks (must divide by the device count)
 *   placement: [d0, d0, d1, d1]   # rank i runs on the named device; several ranks per
 *                                 # device allowed; length must equal ranks when both given
 *
 * A listed topology whose devices are all directly linked pairwise (no switches) is of
 * kind full; one whose devices each link only to a single switch is of kind switch;
 * otherwise custom. Errors name file:line:column and the field.
 *
 * Names (ar_topo_open) are resolved here too: a SPEC goes to the builders of topo.c,
 * anything else to a file. topo.c (the graph, routes, builders) calls nothing here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "topologies/internal.h"

typedef struct ld_s {
    const ar__ydoc_t *d;
    ar_error_t *err;
    char dir[1024]; /* directory of the file, for relative model paths */
} ld_t;

static int field_int(ld_t *L, const ar__ynode_t *map, const char *ctx, const char *key, long min,
                     long max, long dflt, long *out) {
    const ar__ynode_t *n = ar__y_get(map, key);
    if (!n) { *out = dflt; return AR_OK; }
    char f[128];
    snprintf(f, sizeof f, "%s.%s", ctx, key);
    return ar__y_int(L->d, n, f, min, max, AR_ETOPO, out, L->err);
}

static int load_model(ld_t *L, const ar__ynode_t *root, ar_topo_kind_t kind,
                      const char *model_override, ar_model_t **out) {
    if (model_override) return ar_model_load(model_override, out, L->err);
    const ar__ynode_t *n = ar__y_get(root, "model");
    if (!n) return ar_model_load(ar__topo_default_model(kind), out, L->err);
    const char *s;
    AR_TRY(ar__y_string(L->d, n, "model", 512, &s, L->err));
    char path[1600];
    char rel[1600];
    const char *use = s;
    size_t sl = strlen(s);
    int pathlike = strchr(s, '/') || (sl > 5 && !strcmp(s + sl - 5, ".yaml")) ||
                   (sl > 4 && !strcmp(s + sl - 4, ".yml"));
    if (pathlike && s[0] != '/' && L->dir[0]) {
        snprintf(rel, sizeof rel, "%s/%s", L->dir, s);
        use = rel;
    }
    char names[512];
    if (!ar__model_resolve(use, path, sizeof path))
        return ar__y_error(L->err, L->d, n, AR_EMODEL, "model", "unknown model '%s' (shipped: %s; or a path to a .yaml file)",
                           s, ar_model_shipped_list(names, sizeof names));
    FILE *f = fopen(path, "rb");
    if (!f)
        return ar__y_error(L->err, L->d, n, AR_EIO, "model", "cannot read model file '%s'", path);
    fclose(f);
    return ar_model_load(path, out, L->err);
}

static int link_kind(ld_t *L, const ar_model_t *m, const ar__ynode_t *n, const char *field,
                     int *out) {
    if (!n) { *out = 0; return AR_OK; }
    const char *s;
    AR_TRY(ar__y_string(L->d, n, field, AR_NAME_MAX, &s, L->err));
    int k = ar_model_link_kind(m, s);
    if (k < 0) {
        char list[256] = "";
        size_t used = 0;
        for (int i = 0; i < m->nlinks && used < sizeof list; i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                     m->links[i].name);
        return ar__y_error(L->err, L->d, n, AR_ETOPO, field,
                           "unknown link kind '%s' (model %s has: %s)", s, m->name, list);
    }
    *out = k;
    return AR_OK;
}

static int load_builder(ld_t *L, const ar__ynode_t *b, ar_model_t *model_in, ar_topo_t **out) {
    static const char *const kinds[] = {"ring_1d", "torus_2d", "mesh_2d", "full", "switch", NULL};
    static const char *const grid_keys[] = {"w", "h", "link", "count", NULL};
    static const char *const n_keys[] = {"n", "link", "count", NULL};
    ar_model_t *model = model_in;
    int rc;
    if ((rc = ar__y_check_keys(L->d, b, kinds, "builder", L->err)) != AR_OK) goto fail;
    if (b->n != 2) {
        rc = ar__y_error(L->err, L->d, b, AR_EPARSE, "builder",
                         "exactly one of ring_1d, torus_2d, mesh_2d, full, switch expected");
        goto fail;
    }
    const char *kname = b->items[0]->str;
    const ar__ynode_t *p = b->items[1];
    ar_topo_kind_t kind = AR_TOPO_CUSTOM;
    for (int i = 0; kinds[i]; i++)
        if (!strcmp(kinds[i], kname)) kind = (ar_topo_kind_t)(i + 1);
    int grid = kind == AR_TOPO_TORUS_2D || kind == AR_TOPO_MESH_2D;
    char ctx[64];
    snprintf(ctx, sizeof ctx, "builder.%s", kname);
    if ((rc = ar__y_check_keys(L->d, p, grid ? grid_keys : n_keys, ctx, L->err)) != AR_OK) goto fail;
    long w = 1, h = 1, count;
    const long maxn = AR__TOPO_MAX_NODES - 1;
    char f[96];
    if (grid) {
        for (int side = 0; side < 2; side++) {
            const char *key = side ? "h" : "w";
            const ar__ynode_t *n = ar__y_get(p, key);
            snprintf(f, sizeof f, "%s.%s", ctx, key);
            if (!n) { rc = ar__y_error(L->err, L->d, p, AR_EPARSE, f, "missing"); goto fail; }
            long v;
            if ((rc = ar__y_int(L->d, n, f, -1000000, 1000000, AR_ETOPO, &v, L->err)) != AR_OK) goto fail;
            if (v < 1 || v > maxn) {
                rc = ar__y_error(L->err, L->d, n, AR_ETOPO, f,
                                 "grid side must be between 1 and %ld, found %ld", maxn, v);
                goto fail;
            }
            if (side) h = v; else w = v;
        }
        if (w * h > maxn) {
            rc = ar__y_error(L->err, L->d, p, AR_ELIMIT, ctx, "more than %ld devices", maxn);
            goto fail;
        }
    } else {
        const ar__ynode_t *n = ar__y_get(p, "n");
        snprintf(f, sizeof f, "%s.n", ctx);
        if (!n) { rc = ar__y_error(L->err, L->d, p, AR_EPARSE, f, "missing"); goto fail; }
        if ((rc = ar__y_int(L->d, n, f, 1, maxn, AR_ETOPO, &w, L->err)) != AR_OK) goto fail;
    }
    if ((rc = field_int(L, p, ctx, "count", 1, 1024, 1, &count)) != AR_OK) goto fail;
    int lk;
    snprintf(f, sizeof f, "%s.link", ctx);
    if ((rc = link_kind(L, model, ar__y_get(p, "link"), f, &lk)) != AR_OK) goto fail;
    model = NULL; /* build takes it */
    return ar__topo_build_kind(kind, (int)w, (int)h, model_in, lk, (int)count, out, L->err);
fail:
    ar_model_free(model);
    return rc;
}

/* A list of names or a count; fills names into t->nodes[first..]. */
static int node_names(ld_t *L, const ar__ynode_t *n, const char *field, long *count,
                      const ar__ynode_t ***name_nodes) {
    *name_nodes = NULL;
    if (n->kind == AR__Y_SCALAR) {
        return ar__y_int(L->d, n, field, 1, AR__TOPO_MAX_NODES, AR_ETOPO, count, L->err);
    }
    if (n->kind != AR__Y_SEQ)
        return ar__y_error(L->err, L->d, n, AR_EPARSE, field,
                           "expected a list of names or a count, found a mapping");
    if (n->n < 1) return ar__y_error(L->err, L->d, n, AR_ETOPO, field, "empty list");
    if (n->n > AR__TOPO_MAX_NODES)
        return ar__y_error(L->err, L->d, n, AR_ELIMIT, field, "more than %d", AR__TOPO_MAX_NODES);
    *count = n->n;
    *name_nodes = (const ar__ynode_t **)n->items;
    return AR_OK;
}

static int find_node(const ar_topo_t *t, const char *name) {
    for (int i = 0; i < t->nnodes; i++)
        if (!strcmp(t->nodes[i].name, name)) return i;
    return -1;
}

static void infer_kind(ar_topo_t *t) {
    int nd = t->ndevices, ns = t->nnodes - nd;
    if (ns == 0 && nd >= 2) {
        char *seen = calloc((size_t)nd * nd, 1);
        if (!seen) return;
        for (int i = 0; i < t->nlinks; i++) {
            seen[t->links[i].a * nd + t->links[i].b] = 1;
            seen[t->links[i].b * nd + t->links[i].a] = 1;
        }
        int full = 1;
        for (int i = 0; i < nd && full; i++)
            for (int j = i + 1; j < nd && full; j++) full = seen[i * nd + j];
        free(seen);
        if (full) t->kind = AR_TOPO_FULL;
    } else if (ns == 1) {
        int ok = 1;
        for (int i = 0; i < t->nlinks && ok; i++)
            ok = (t->links[i].a == nd) != (t->links[i].b == nd);
        char *has = calloc((size_t)nd, 1);
        if (!has) return;
        for (int i = 0; i < t->nlinks; i++) has[t->links[i].a == nd ? t->links[i].b : t->links[i].a] = 1;
        for (int i = 0; i < nd && ok; i++) ok = has[i];
        free(has);
        if (ok) t->kind = AR_TOPO_SWITCH;
    }
}

static int load_listed(ld_t *L, const ar__ynode_t *root, ar_model_t *model, ar_topo_t **out) {
    static const char *const link_keys[] = {"a", "b", "kind", "count", NULL};
    int rc;
    ar_topo_t *t = NULL;
    const ar__ynode_t *dn = ar__y_get(root, "devices"), *sn = ar__y_get(root, "switches");
    const ar__ynode_t **dnames, **snames = NULL;
    long nd, ns = 0;
    if (!dn) {
        rc = ar__y_error(L->err, L->d, root, AR_EPARSE, "devices", "missing (give devices or a builder)");
        goto fail;
    }
    if ((rc = node_names(L, dn, "devices", &nd, &dnames)) != AR_OK) goto fail;
    if (sn && (rc = node_names(L, sn, "switches", &ns, &snames)) != AR_OK) goto fail;
    if (nd + ns > AR__TOPO_MAX_NODES) {
        rc = ar__y_error(L->err, L->d, dn, AR_ELIMIT, "devices", "more than %d nodes with switches",
                         AR__TOPO_MAX_NODES);
        goto fail;
    }
    if ((rc = ar__topo_new((int)nd, (int)ns, &t, L->err)) != AR_OK) goto fail;
    t->model = model;
    model = NULL;
    t->kind = AR_TOPO_CUSTOM;
    for (int i = 0; i < t->nnodes; i++) {
        int sw = i >= nd;
        const ar__ynode_t **names = sw ? snames : dnames;
        if (!names) continue;
        int k = sw ? i - (int)nd : i;
        char f[64];
        snprintf(f, sizeof f, "%s[%d]", sw ? "switches" : "devices", k);
        const char *s;
        if ((rc = ar__y_string(L->d, names[k], f, AR_NAME_MAX, &s, L->err)) != AR_OK) goto fail;
        snprintf(t->nodes[i].name, AR_NAME_MAX, "%s", s);
    }
    for (int i = 0; i < t->nnodes; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(t->nodes[i].name, t->nodes[j].name)) {
                int sw = i >= nd;
                const ar__ynode_t **names = sw ? snames : dnames;
                const ar__ynode_t *at = names ? names[sw ? i - nd : i] : (sw ? sn : dn);
                char f[64];
                snprintf(f, sizeof f, "%s[%ld]", sw ? "switches" : "devices", sw ? i - nd : i);
                rc = ar__y_error(L->err, L->d, at, AR_ETOPO, f, "duplicate device name '%s'",
                                 t->nodes[i].name);
                goto fail;
            }

    const ar__ynode_t *ln = ar__y_get(root, "links");
    if (ln) {
        if ((rc = ar__y_expect(L->d, ln, AR__Y_SEQ, "links", L->err)) != AR_OK) goto fail;
        for (int i = 0; i < ln->n; i++) {
            const ar__ynode_t *e = ln->items[i];
            char ctx[48], f[64];
            snprintf(ctx, sizeof ctx, "links[%d]", i);
            if ((rc = ar__y_check_keys(L->d, e, link_keys, ctx, L->err)) != AR_OK) goto fail;
            int ends[2];
            for (int s = 0; s < 2; s++) {
                const char *key = s ? "b" : "a", *nm;
                const ar__ynode_t *x = ar__y_get(e, key);
                snprintf(f, sizeof f, "%s.%s", ctx, key);
                if (!x) { rc = ar__y_error(L->err, L->d, e, AR_EPARSE, f, "missing"); goto fail; }
                if ((rc = ar__y_string(L->d, x, f, AR_NAME_MAX, &nm, L->err)) != AR_OK) goto fail;
                ends[s] = find_node(t, nm);
                if (ends[s] < 0) {
                    rc = ar__y_error(L->err, L->d, x, AR_ETOPO, f, "unknown device '%s'", nm);
                    goto fail;
                }
            }
            if (ends[0] == ends[1]) {
                snprintf(f, sizeof f, "%s.b", ctx);
                rc = ar__y_error(L->err, L->d, ar__y_get(e, "b"), AR_ETOPO, f,
                                 "a link from '%s' to itself", t->nodes[ends[0]].name);
                goto fail;
            }
            int lk;
            long count;
            snprintf(f, sizeof f, "%s.kind", ctx);
            if ((rc = link_kind(L, t->model, ar__y_get(e, "kind"), f, &lk)) != AR_OK) goto fail;
            if ((rc = field_int(L, e, ctx, "count", 1, 1024, 1, &count)) != AR_OK) goto fail;
            if (ar__topo_add_link(t, ends[0], ends[1], lk, (int)count, 0) != AR_OK) {
                rc = AR_ERR(L->err, AR_ENOMEM, "out of memory");
                goto fail;
            }
        }
    }
    infer_kind(t);
    int bad;
    if ((rc = ar__topo_finish(t, &bad, L->err)) != AR_OK) {
        if (bad >= 0) {
            /* point at the unreachable node's name, or at the list */
            int sw = bad >= nd;
            const ar__ynode_t **names = sw ? snames : dnames;
            const ar__ynode_t *at = names ? names[sw ? bad - nd : bad] : (sw ? sn : dn);
            char msg[256];
            snprintf(msg, sizeof msg, "%s", L->err ? L->err->message : "disconnected");
            rc = ar__y_error(L->err, L->d, at, AR_ETOPO, sw ? "switches" : "devices", "%s", msg);
        }
        goto fail;
    }
    *out = t;
    return AR_OK;
fail:
    ar_model_free(model);
    ar_topo_free(t);
    return rc;
}

static int load_ranks(ld_t *L, const ar__ynode_t *root, ar_topo_t *t) {
    const ar__ynode_t *rn = ar__y_get(root, "ranks"), *pn = ar__y_get(root, "placement");
    long nranks = 0;
    if (rn) AR_TRY(ar__y_int(L->d, rn, "ranks", 1, AR__TOPO_MAX_RANKS, AR_ETOPO, &nranks, L->err));
    if (!pn) {
        if (!rn) return AR_OK;
        if (nranks % t->ndevices != 0)
            return ar__y_error(L->err, L->d, rn, AR_ETOPO, "ranks",
                               "%ld ranks do not divide evenly over %d devices (give a placement, "
                               "or a multiple of %d ranks)",
                               nranks, t->ndevices, t->ndevices);
        return ar_topo_place_blocks(t, (int)nranks, L->err);
    }
    AR_TRY(ar__y_expect(L->d, pn, AR__Y_SEQ, "placement", L->err));
    if (pn->n < 1) return ar__y_error(L->err, L->d, pn, AR_ETOPO, "placement", "empty list");
    if (pn->n > AR__TOPO_MAX_RANKS)
        return ar__y_error(L->err, L->d, pn, AR_ELIMIT, "placement", "more than %d ranks",
                           AR__TOPO_MAX_RANKS);
    if (rn && nranks != pn->n)
        return ar__y_error(L->err, L->d, rn, AR_ETOPO, "ranks",
                           "%ld ranks but placement lists %d", nranks, pn->n);
    int *p = malloc((size_t)pn->n * sizeof(int));
    if (!p) return AR_ERR(L->err, AR_ENOMEM, "out of memory");
    for (int r = 0; r < pn->n; r++) {
        char f[48];
        snprintf(f, sizeof f, "placement[%d]", r);
        const char *nm;
        int rc = ar__y_string(L->d, pn->items[r], f, AR_NAME_MAX, &nm, L->err);
        int dev = rc == AR_OK ? find_node(t, nm) : -1;
        if (rc == AR_OK && dev < 0)
            rc = ar__y_error(L->err, L->d, pn->items[r], AR_ETOPO, f, "unknown device '%s'", nm);
        else if (rc == AR_OK && dev >= t->ndevices)
            rc = ar__y_error(L->err, L->d, pn->items[r], AR_ETOPO, f,
                             "'%s' is a switch; ranks run on devices", nm);
        if (rc != AR_OK) { free(p); return rc; }
        p[r] = dev;
    }
    free(t->placement);
    t->placement = p;
    t->nranks = pn->n;
    return AR_OK;
}

static int load_doc(const ar__ydoc_t *d, const char *model_override, ar_topo_t **out,
                    ar_error_t *err) {
    static const char *const keys[] = {"name", "description", "model", "builder", "devices",
                                       "switches", "links", "ranks", "placement", NULL};
    *out = NULL;
    ld_t L = {.d = d, .err = err};
    snprintf(L.dir, sizeof L.dir, "%s", d->label);
    char *slash = strrchr(L.dir, '/');
    if (slash) *slash = '\0';
    else L.dir[0] = '\0';
    const ar__ynode_t *root = d->root;
    if (!root) return ar__y_error(err, d, NULL, AR_EPARSE, "topology", "empty document");
    AR_TRY(ar__y_check_keys(d, root, keys, "", err));
    const char *name = NULL, *s;
    const ar__ynode_t *n;
    if ((n = ar__y_get(root, "name"))) {
        AR_TRY(ar__y_string(d, n, "name", AR_NAME_MAX, &name, err));
        if (!ar_name_ok(name))
            return ar__y_error(err, d, n, AR_EPARSE, "name",
                               "printable characters without spaces, commas, quotes or '#' (it is a field of every row)");
    }
    if ((n = ar__y_get(root, "description"))) AR_TRY(ar__y_string(d, n, "description", 1024, &s, err));

    /* Limits first: a document too big to be used is refused before any work on it. */
    if ((n = ar__y_get(root, "placement"))) {
        AR_TRY(ar__y_expect(d, n, AR__Y_SEQ, "placement", err));
        if (n->n > AR__TOPO_MAX_RANKS)
            return ar__y_error(err, d, n, AR_ELIMIT, "placement", "more than %d ranks",
                               AR__TOPO_MAX_RANKS);
    }
    if ((n = ar__y_get(root, "ranks"))) {
        long r;
        AR_TRY(ar__y_int(d, n, "ranks", 1, AR__TOPO_MAX_RANKS, AR_ETOPO, &r, err));
    }

    const ar__ynode_t *b = ar__y_get(root, "builder");
    ar_topo_kind_t kind = AR_TOPO_CUSTOM;
    if (b) {
        const char *clash = ar__y_get(root, "devices") ? "devices"
                            : ar__y_get(root, "switches") ? "switches"
                            : ar__y_get(root, "links") ? "links" : NULL;
        if (clash) {
            const ar__ynode_t *cn = ar__y_get(root, clash);
            return ar__y_error(err, d, cn, AR_EPARSE, clash,
                               "give either a builder or devices/switches/links, not both");
        }
        AR_TRY(ar__y_expect(d, b, AR__Y_MAP, "builder", err));
        if (b->n >= 2 && b->items[0]->kind == AR__Y_SCALAR)
            for (int i = 1; i <= AR_TOPO_SWITCH; i++)
                if (!strcmp(b->items[0]->str, ar_topo_kind_name((ar_topo_kind_t)i)))
                    kind = (ar_topo_kind_t)i;
    }
    ar_model_t *model;
    AR_TRY(load_model(&L, root, kind, model_override, &model));
    ar_topo_t *t;
    if (b) AR_TRY(load_builder(&L, b, model, &t));
    else AR_TRY(load_listed(&L, root, model, &t));
    int rc = load_ranks(&L, root, t);
    if (rc != AR_OK) {
        ar_topo_free(t);
        return rc;
    }
    if (name) {
        snprintf(t->name, sizeof t->name, "%s", name);
    } else {
        const char *base = strrchr(d->label, '/');
        snprintf(t->name, sizeof t->name, "%.63s", base ? base + 1 : d->label);
        char *dot = strrchr(t->name, '.');
        if (dot && dot != t->name) *dot = '\0';
    }
    snprintf(t->path, sizeof t->path, "%s", d->label);
    *out = t;
    return AR_OK;
}

int ar_topo_load(const char *path, const char *model_override, ar_topo_t **out, ar_error_t *err) {
    *out = NULL;
    ar__ydoc_t *d;
    AR_TRY(ar__ydoc_load_file(path, &d, err));
    int rc = load_doc(d, model_override, out, err);
    ar__ydoc_free(d);
    return rc;
}

int ar_topo_load_string(const char *yaml, const char *label, const char *model_override,
                        ar_topo_t **out, ar_error_t *err) {
    *out = NULL;
    ar__ydoc_t *d;
    AR_TRY(ar__ydoc_load_string(yaml, strlen(yaml), label, &d, err));
    int rc = load_doc(d, model_override, out, err);
    ar__ydoc_free(d);
    return rc;
}

/* ---- names: a SPEC, a shipped topology or a file ---- */

const char *const *ar_topo_shipped(void) { return ar_data_names("topologies"); }

const char *ar_topo_dir(void) {
    static char buf[1024];
    return ar_data_path("topologies", buf, sizeof buf);
}

int ar_topo_open(const char *spec_or_path, const char *model_override, ar_topo_t **out,
                 ar_error_t *err) {
    *out = NULL;
    if (!spec_or_path || !spec_or_path[0]) return AR_ERR(err, AR_ETOPO, "topology: empty");
    const char *s = spec_or_path;
    if (ar__topo_is_spec(s)) {
        ar_model_t *m = NULL;
        if (model_override) AR_TRY(ar_model_load(model_override, &m, err));
        return ar_topo_build(s, m, out, err);
    }
    size_t n = strlen(s);
    int pathlike = strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".yaml")) ||
                   (n > 4 && !strcmp(s + n - 4, ".yml"));
    if (pathlike || access(s, F_OK) == 0) return ar_topo_load(s, model_override, out, err);
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.yaml", ar_topo_dir(), s);
    if (access(path, F_OK) == 0) return ar_topo_load(path, model_override, out, err);
    return AR_ERR(err, AR_ETOPO, "topology: unknown '%s': not a SPEC (ring_1d:N, torus_2d:WxH, "
                  "mesh_2d:WxH, full:N, switch:N), a shipped name (arsim list topologies) or a file",
                  s);
}
