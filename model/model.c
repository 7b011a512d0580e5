/* Hardware models: model/<name>.yaml, every key declared once in arsim/model_keys.h.
 *
 * Format:
 *
 *   name: h200_sxm                 # optional, defaults to the file's base name
 *   description: "..."             # optional
 *   clock_ghz: 1.98                # and every other ROOT key of the table
 *   memory:                        # all three levels, fastest first
 *     tcm:  {present: false}       # a level the device does not have
 *     sram: {capacity_bytes: ..., read_gbps: ..., write_gbps: ..., lat_ns: ...}   # LEVEL keys
 *     hbm:  {capacity_bytes: ..., read_gbps: ..., write_gbps: ..., lat_ns: ...}
 *   links:                         # link kinds; the first is the builders' default
 *     - {name: nvlink4, bw_gbps: 26.562, lat_ns: 300}   # LINK keys
 *
 * A required key must be a positive finite number, an optional one a finite number >= 0
 * (0 or absent: the term is left out); both within the table's range (AR_EMODEL
 * otherwise). Unknown keys and wrong types are AR_EPARSE. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/internal.h"

#define MAX_LINK_KINDS 32

#define AR__MK_ENTRY(sect, key, unit, req, lo, hi, doc)                                                     \
    {#key, AR_MK_##sect, AR__MK_OFFSET_##sect(key), unit, req, lo, hi, doc},
#define AR__MK_OFFSET_ROOT(key) offsetof(ar_model_t, key)
#define AR__MK_OFFSET_LEVEL(key) offsetof(ar_mem_level_t, key)
#define AR__MK_OFFSET_LINK(key) offsetof(ar_link_kind_t, key)
static const ar_model_key_t model_keys[] = {AR_MODEL_KEYS(AR__MK_ENTRY)};
#define NKEYS (int)(sizeof model_keys / sizeof model_keys[0])

_Static_assert(NKEYS <= AR_MODEL_MAX_KEYS, "ar_model_calib_t.assumed holds a word per key");
_Static_assert(MAX_LINK_KINDS <= 64, "ar_model_calib_t.assumed holds a bit per link kind");

const ar_model_key_t *ar_model_keys(int *n) {
    *n = NKEYS;
    return model_keys;
}

const ar_model_key_t *ar_model_key_find(const char *name) {
    for (int i = 0; i < NKEYS; i++)
        if (!strcmp(model_keys[i].name, name)) return &model_keys[i];
    return NULL;
}

double ar_model_unit_si(const char *unit) {
    if (!strcmp(unit, "ns")) return 1e-9;
    if (!strcmp(unit, "GB/s") || !strcmp(unit, "GHz")) return 1e9;
    if (!strcmp(unit, "TFLOP/s")) return 1e12;
    return 1;
}

double *ar_model_slot(ar_model_t *m, const ar_model_key_t *k, int l) {
    char *base = k->section == AR_MK_ROOT    ? (char *)m
                 : k->section == AR_MK_LEVEL ? (char *)&m->mem[l]
                                             : (char *)&m->links[l];
    return (double *)(base + k->offset);
}

double ar_model_get(const ar_model_t *m, const ar_model_key_t *k, int l) {
    return *ar_model_slot((ar_model_t *)m, k, l);
}

/* The shortest decimal that reads back as v. */
static void fmt_value(double v, char *buf, size_t len) {
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    /* integers in full, not as 1.5e+11 */
    if (v == floor(v) && fabs(v) < 1e17 && strchr(buf, 'e')) snprintf(buf, len, "%.0f", v);
}

const char *ar_model_key_path(const ar_model_t *m, const ar_model_key_t *k, int l, char *buf, size_t len) {
    if (k->section == AR_MK_LEVEL)
        snprintf(buf, len, "memory.%s.%s", ar_mem_name((ar_mem_t)l), k->name);
    else if (k->section == AR_MK_LINK)
        snprintf(buf, len, "links.%s.%s", m->links[l].name, k->name);
    else
        snprintf(buf, len, "%s", k->name);
    return buf;
}

int ar_model_each_key(const ar_model_t *m, int (*fn)(const ar_model_t *m, const ar_model_key_t *k, int l, void *ctx),
                      void *ctx) {
    for (int i = 0; i < NKEYS; i++) {
        const ar_model_key_t *k = &model_keys[i];
        const int count = k->section == AR_MK_ROOT ? 1 : k->section == AR_MK_LEVEL ? AR_NMEM : m->nlinks;
        for (int l = 0; l < count; l++) {
            if (k->section == AR_MK_LEVEL && !m->mem[l].present) continue;
            int rc = fn(m, k, l, ctx);
            if (rc) return rc;
        }
    }
    return 0;
}

static int write_assumed(const ar_model_t *m, const ar_model_key_t *k, int l, void *ctx) {
    FILE *f = ctx;
    if (!(m->calib.assumed[k - model_keys] >> l & 1)) return 0;
    char path[160];
    fprintf(f, "    - %s\n", ar_model_key_path(m, k, l, path, sizeof path));
    return 0;
}

int ar_model_write_calibration(FILE *f, const ar_model_t *m) {
    const ar_model_calib_t *c = &m->calib;
    if (!c->gpus) return AR_OK;
    fputs("calibration:                   # where the values above came from (arsim model show lists them)\n", f);
#define KNOWN(s) ((s)[0] ? (s) : "unknown")
    fprintf(f, "  device: \"%s\"\n  driver: \"%s\"\n  runtime: \"%s\"\n  date: \"%s\"\n  gpus: %d\n", KNOWN(c->device),
            KNOWN(c->driver), KNOWN(c->runtime), KNOWN(c->date), c->gpus);
#undef KNOWN
    fputs("  assumed:                     # the keys no benchmark measured; every other key was measured\n", f);
    ar_model_each_key(m, write_assumed, f);
    return ferror(f) ? AR_EIO : AR_OK;
}

/* `indent key: value`, then the note as a comment at column 32, a line of its own for
 * each of its lines. */
static void write_line(FILE *f, int indent, const char *key, const char *value, const char *note) {
    int w = fprintf(f, "%*s%s: %s", indent, "", key, value);
    if (!note || !note[0]) {
        fputc('\n', f);
        return;
    }
    for (const char *line = note; line;) {
        const char *nl = strchr(line, '\n');
        const int n = nl ? (int)(nl - line) : (int)strlen(line);
        fprintf(f, "%*s# %.*s\n", w < 31 ? 31 - w : 1, "", n, line);
        w = 0;
        line = nl ? nl + 1 : NULL;
    }
}

int ar_model_write(FILE *f, const ar_model_t *m, const char *description,
                   const char *(*note)(const ar_model_key_t *k, int l, void *ctx), void *ctx) {
    char v[64];
    fprintf(f, "name: %s\n", m->name);
    if (description) fprintf(f, "description: \"%s\"\n", description);
    int levels_done = 0, links_done = 0;
    for (int i = 0; i < NKEYS; i++) {
        const ar_model_key_t *k = &model_keys[i];
        if (k->section == AR_MK_LEVEL && !levels_done) {
            levels_done = 1;
            fputs("memory:\n", f);
            for (int l = 0; l < AR_NMEM; l++) {
                fprintf(f, "  %s:\n", ar_mem_name((ar_mem_t)l));
                if (!m->mem[l].present) {
                    write_line(f, 4, "present", "false", note ? note(NULL, l, ctx) : NULL);
                    continue;
                }
                for (int j = 0; j < NKEYS; j++)
                    if (model_keys[j].section == AR_MK_LEVEL) {
                        fmt_value(ar_model_get(m, &model_keys[j], l), v, sizeof v);
                        write_line(f, 4, model_keys[j].name, v, note ? note(&model_keys[j], l, ctx) : NULL);
                    }
            }
        } else if (k->section == AR_MK_LINK && !links_done) {
            links_done = 1;
            fputs("links:\n", f);
            for (int l = 0; l < m->nlinks; l++) {
                fprintf(f, "  - name: %s\n", m->links[l].name);
                for (int j = 0; j < NKEYS; j++)
                    if (model_keys[j].section == AR_MK_LINK) {
                        fmt_value(ar_model_get(m, &model_keys[j], l), v, sizeof v);
                        write_line(f, 4, model_keys[j].name, v, note ? note(&model_keys[j], l, ctx) : NULL);
                    }
            }
        } else if (k->section == AR_MK_ROOT) {
            fmt_value(ar_model_get(m, k, 0), v, sizeof v);
            write_line(f, 0, k->name, v, note ? note(k, 0, ctx) : NULL);
        }
    }
    return ferror(f) ? AR_EIO : AR_OK;
}

/* The names a section's mapping may hold: its keys of the table and `extra`. */
static void section_names(ar_model_sect_t sect, const char *const *extra, const char **out) {
    int n = 0;
    for (; extra[n]; n++) out[n] = extra[n];
    for (int i = 0; i < NKEYS; i++)
        if (model_keys[i].section == sect) out[n++] = model_keys[i].name;
    out[n] = NULL;
}

const char *const *ar_model_shipped(void) { return ar_data_names("model"); }

const char *ar_model_shipped_list(char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (const char *const *n = ar_model_shipped(); *n && used < len; n++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", n == ar_model_shipped() ? "" : ", ", *n);
    if (!buf[0]) snprintf(buf, len, "none in %s", ar_model_dir());
    return buf;
}

const char *ar_model_dir(void) {
    static char buf[1024];
    return ar_data_path("model", buf, sizeof buf);
}

double ar_model_chan_read_gbps(const ar_model_t *m) {
    /* Little's law: bytes in flight / round trip, bytes per ns = GB/s. */
    return m->chan_read_lat_ns > 0 ? m->chan_inflight_bytes / m->chan_read_lat_ns : 0;
}

double ar_model_pull_request_share(const ar_link_kind_t *k) {
    return k->pull_gbps > 0 && k->pull_gbps < k->bw_gbps ? k->bw_gbps / k->pull_gbps - 1 : 0;
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

int ar_model_copy(const ar_model_t *m, ar_model_t **out) {
    *out = NULL;
    ar_model_t *c = malloc(sizeof *c);
    if (!c) return AR_ENOMEM;
    *c = *m;
    c->links = NULL;
    if (m->nlinks > 0) {
        c->links = malloc((size_t)m->nlinks * sizeof *c->links);
        if (!c->links) {
            free(c);
            return AR_ENOMEM;
        }
        memcpy(c->links, m->links, (size_t)m->nlinks * sizeof *c->links);
    }
    *out = c;
    return AR_OK;
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

static int parse_keys(const ar__ydoc_t *d, const ar__ynode_t *map, const char *ctx, ar_model_sect_t sect,
                      ar_model_t *m, int l, ar_error_t *err) {
    for (int i = 0; i < NKEYS; i++) {
        const ar_model_key_t *k = &model_keys[i];
        if (k->section != sect) continue;
        char field[160];
        snprintf(field, sizeof field, "%s%s%s", ctx, ctx[0] ? "." : "", k->name);
        double *v = ar_model_slot(m, k, l);
        ar__ynode_t *n = ar__y_get(map, k->name);
        *v = 0;
        if (k->required) {
            AR_TRY(req(d, map, ctx, k->name, &n, err));
            AR_TRY(ar__y_positive(d, n, field, AR_EMODEL, v, err));
        } else if (n) {
            AR_TRY(ar__y_number(d, n, field, v, err));
            if (!(*v >= 0) || !isfinite(*v))
                return ar__y_error(err, d, n, AR_EMODEL, field, "must be a finite number >= 0 (got %g)", *v);
        }
        if (n && (k->required || *v != 0) && (*v < k->min || *v > k->max))
            return ar__y_error(err, d, n, AR_EMODEL, field, "%g %s is out of range: %g to %g %s%s", *v, k->unit, k->min,
                               k->max, k->unit, k->required ? "" : " (or 0: none)");
    }
    return AR_OK;
}

static int parse_level(const ar__ydoc_t *d, const ar__ynode_t *mem, ar_mem_t lvl, ar_model_t *m,
                       ar_error_t *err) {
    static const char *const extra[] = {"present", NULL};
    const char *keys[NKEYS + 2];
    section_names(AR_MK_LEVEL, extra, keys);
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
    ar_mem_level_t *out = &m->mem[lvl];
    memset(out, 0, sizeof *out);
    if (!present) {
        if (n->n > 2)
            return ar__y_error(err, d, n->items[n->items[0] == p ? 2 : 0], AR_EPARSE, ctx,
                               "a level with present: false takes no other keys");
        return AR_OK;
    }
    out->present = 1;
    AR_TRY(parse_keys(d, n, ctx, AR_MK_LEVEL, m, (int)lvl, err));
    /* a byte written among reads costs 2/copy - 1/read: more than nothing */
    if (out->copy_gbps > 0 && !(out->copy_gbps < 2 * out->read_gbps)) {
        char field[80];
        snprintf(field, sizeof field, "%s.copy_gbps", ctx);
        return ar__y_error(err, d, ar__y_get(n, "copy_gbps"), AR_EMODEL, field,
                           "must be below twice read_gbps (%g >= 2 x %g)", out->copy_gbps, out->read_gbps);
    }
    return AR_OK;
}

/* The key a calibration block's `assumed` entry names: *out and its level or link kind. */
typedef struct key_lookup_s {
    const char *path;
    const ar_model_key_t *k;
    int l;
} key_lookup_t;

static int match_path(const ar_model_t *m, const ar_model_key_t *k, int l, void *ctx) {
    key_lookup_t *x = ctx;
    char path[160];
    if (strcmp(ar_model_key_path(m, k, l, path, sizeof path), x->path)) return 0;
    x->k = k;
    x->l = l;
    return 1;
}

static int parse_calibration(const ar__ydoc_t *d, const ar__ynode_t *n, ar_model_t *m, ar_error_t *err) {
    static const char *const keys[] = {"device", "driver", "runtime", "date", "gpus", "assumed", NULL};
    AR_TRY(ar__y_check_keys(d, n, keys, "calibration", err));
    ar_model_calib_t *c = &m->calib;
    struct { const char *key; char *dst; size_t len; } strs[] = {
        {"device", c->device, sizeof c->device}, {"driver", c->driver, sizeof c->driver},
        {"runtime", c->runtime, sizeof c->runtime}, {"date", c->date, sizeof c->date},
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        char field[64];
        snprintf(field, sizeof field, "calibration.%s", strs[i].key);
        ar__ynode_t *v;
        const char *s;
        AR_TRY(req(d, n, "calibration", strs[i].key, &v, err));
        AR_TRY(ar__y_string(d, v, field, strs[i].len - 1, &s, err));
        snprintf(strs[i].dst, strs[i].len, "%s", s);
    }
    ar__ynode_t *v;
    long gpus;
    AR_TRY(req(d, n, "calibration", "gpus", &v, err));
    AR_TRY(ar__y_int(d, v, "calibration.gpus", 1, 64, AR_EPARSE, &gpus, err));
    c->gpus = (int)gpus;
    if (!(v = ar__y_get(n, "assumed"))) return AR_OK;
    if (v->kind == AR__Y_SCALAR && v->plain && !v->str[0]) return AR_OK; /* `assumed:` with nothing under it */
    AR_TRY(ar__y_expect(d, v, AR__Y_SEQ, "calibration.assumed", err));
    for (int i = 0; i < v->n; i++) {
        const char *s;
        AR_TRY(ar__y_string(d, v->items[i], "calibration.assumed", 160, &s, err));
        key_lookup_t x = {s, NULL, 0};
        if (!ar_model_each_key(m, match_path, &x))
            return ar__y_error(err, d, v->items[i], AR_EPARSE, "calibration.assumed",
                               "'%s' is not a key of this model (arsim model show lists them)", s);
        c->assumed[x.k - model_keys] |= 1ull << x.l;
    }
    return AR_OK;
}

static int parse_model(const ar__ydoc_t *d, const char *default_name, ar_model_t **out,
                       ar_error_t *err) {
    static const char *const extra[] = {"name", "description", "memory", "links", "calibration", NULL};
    static const char *const link_extra[] = {"name", NULL};
    const char *keys[NKEYS + 5], *link_keys[NKEYS + 2];
    section_names(AR_MK_ROOT, extra, keys);
    section_names(AR_MK_LINK, link_extra, link_keys);
    static const char *const mem_keys[] = {"tcm", "sram", "hbm", NULL};
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
        if (!ar_name_ok(s)) {
            rc = ar__y_error(err, d, n, AR_EPARSE, "name",
                             "printable characters without spaces, commas, quotes or '#' (it is a field of every row)");
            goto fail;
        }
        snprintf(m->name, sizeof m->name, "%s", s);
    } else {
        snprintf(m->name, sizeof m->name, "%s", default_name);
    }
    if ((n = ar__y_get(root, "description")))
        AR_TRY_GOTO(ar__y_string(d, n, "description", 1024, &s, err), rc, fail);

    AR_TRY_GOTO(req(d, root, "", "memory", &n, err), rc, fail);
    AR_TRY_GOTO(ar__y_check_keys(d, n, mem_keys, "memory", err), rc, fail);
    int any = 0;
    for (int l = 0; l < AR_NMEM; l++) {
        AR_TRY_GOTO(parse_level(d, n, (ar_mem_t)l, m, err), rc, fail);
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
        AR_TRY_GOTO(parse_keys(d, lk, ctx, AR_MK_LINK, m, i, err), rc, fail);
        snprintf(m->links[i].name, sizeof m->links[i].name, "%s", s);
        m->nlinks = i + 1;
    }

    AR_TRY_GOTO(parse_keys(d, root, "", AR_MK_ROOT, m, 0, err), rc, fail);
    if (m->l2_hit_bytes > 0 && m->l2_miss_bytes > 0 && m->l2_hit_bytes > m->l2_miss_bytes) {
        rc = ar__y_error(err, d, ar__y_get(root, "l2_hit_bytes"), AR_EMODEL, "l2_hit_bytes",
                         "must not exceed l2_miss_bytes (%g > %g)", m->l2_hit_bytes, m->l2_miss_bytes);
        goto fail;
    }
    if (m->l2_bw_hit_bytes > 0 && m->l2_bw_miss_bytes > 0 && m->l2_bw_hit_bytes > m->l2_bw_miss_bytes) {
        rc = ar__y_error(err, d, ar__y_get(root, "l2_bw_hit_bytes"), AR_EMODEL, "l2_bw_hit_bytes",
                         "must not exceed l2_bw_miss_bytes (%g > %g)", m->l2_bw_hit_bytes, m->l2_bw_miss_bytes);
        goto fail;
    }
    if ((n = ar__y_get(root, "calibration"))) AR_TRY_GOTO(parse_calibration(d, n, m, err), rc, fail);
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
    {
        char names[512];
        return AR_ERR(err, AR_EMODEL, "model: unknown model '%s' (shipped: %s; or a path to a .yaml file)",
                      name_or_path, ar_model_shipped_list(names, sizeof names));
    }
    ar__ydoc_t *d;
    AR_TRY(ar__ydoc_load_file(path, &d, err));
    char nm[AR_NAME_MAX];
    base_name(path, nm, sizeof nm);
    int rc = parse_model(d, nm, out, err);
    ar__ydoc_free(d);
    return rc;
}
