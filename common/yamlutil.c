/* A YAML node tree with positions, built from libyaml's event stream. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>
#include "arsim/types.h"
#include "arsim/util.h"
#include "common/yamlutil.h"

#define yerr ar__y_error

typedef struct anchor_s {
    char *name;
    ar__ynode_t *node;
} anchor_t;

int ar__y_error(ar_error_t *err, const ar__ydoc_t *d, const ar__ynode_t *n, int code,
                const char *field, const char *fmt, ...) {
    char why[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    int line = n ? n->line : 1, col = n ? n->col : 1;
    if (field && field[0])
        return ar_error_set(err, code, d->label, line, col, "%s: %s", field, why);
    return ar_error_set(err, code, d->label, line, col, "%s", why);
}

static ar__ynode_t *node_new(ar__ydoc_t *d, ar__ykind_t kind, yaml_mark_t m) {
    if (ar_grow(&d->all, &d->capall, (size_t)d->nall, sizeof *d->all) != AR_OK) return NULL;
    ar__ynode_t *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->kind = kind;
    n->line = (int)m.line + 1;
    n->col = (int)m.column + 1;
    n->size = 1;
    d->all[d->nall++] = n;
    return n;
}

static int node_push(ar__ynode_t *parent, ar__ynode_t *child) {
    if (ar_grow(&parent->items, &parent->cap, (size_t)parent->n, sizeof *parent->items) != AR_OK) return AR_ENOMEM;
    parent->items[parent->n++] = child;
    return AR_OK;
}

void ar__ydoc_free(ar__ydoc_t *d) {
    if (!d) return;
    for (int i = 0; i < d->nall; i++) {
        free(d->all[i]->str);
        free(d->all[i]->items);
        free(d->all[i]);
    }
    free(d->all);
    free(d);
}

static int parse_events(yaml_parser_t *p, ar__ydoc_t *d, ar_error_t *err) {
    ar__ynode_t *stack[AR__Y_MAX_DEPTH];
    int depth = 0, ndocs = 0, rc = AR_OK;
    anchor_t *anchors = NULL;
    int nanchors = 0, capanchors = 0;
    long total = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(p, &ev)) {
            rc = ar_error_set(err, AR_EPARSE, d->label, (int)p->problem_mark.line + 1,
                              (int)p->problem_mark.column + 1, "yaml: %s%s%s",
                              p->problem ? p->problem : "syntax error",
                              p->context ? " " : "", p->context ? p->context : "");
            goto out;
        }
        ar__ynode_t *n = NULL;
        const char *anchor = NULL;
        int done = 0;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = 1; break;
        case YAML_DOCUMENT_START_EVENT:
            if (++ndocs > 1) {
                ar__ynode_t at = {.line = (int)ev.start_mark.line + 1,
                                  .col = (int)ev.start_mark.column + 1};
                rc = yerr(err, d, &at, AR_EPARSE, "yaml", "only one document per file");
            }
            break;
        case YAML_SCALAR_EVENT:
            n = node_new(d, AR__Y_SCALAR, ev.start_mark);
            if (!n) { rc = AR_ENOMEM; break; }
            n->str = strndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
            if (!n->str) { rc = AR_ENOMEM; break; }
            n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
            anchor = (const char *)ev.data.scalar.anchor;
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            n = node_new(d, ev.type == YAML_SEQUENCE_START_EVENT ? AR__Y_SEQ : AR__Y_MAP,
                         ev.start_mark);
            if (!n) { rc = AR_ENOMEM; break; }
            n->open = 1;
            anchor = (const char *)(ev.type == YAML_SEQUENCE_START_EVENT
                                        ? ev.data.sequence_start.anchor
                                        : ev.data.mapping_start.anchor);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: {
            ar__ynode_t *c = stack[--depth];
            c->open = 0;
            if (depth > 0) stack[depth - 1]->size += c->size;
            break;
        }
        case YAML_ALIAS_EVENT: {
            const char *name = (const char *)ev.data.alias.anchor;
            ar__ynode_t *target = NULL;
            for (int i = nanchors - 1; i >= 0; i--)
                if (strcmp(anchors[i].name, name) == 0) { target = anchors[i].node; break; }
            ar__ynode_t at = {.line = (int)ev.start_mark.line + 1,
                              .col = (int)ev.start_mark.column + 1};
            if (!target) {
                rc = yerr(err, d, &at, AR_EPARSE, "yaml", "undefined alias '%s'", name);
            } else if (target->open) {
                rc = yerr(err, d, &at, AR_EPARSE, "yaml", "recursive alias '%s'", name);
            } else if ((total += target->size) > AR__Y_MAX_NODES) {
                rc = yerr(err, d, &at, AR_ELIMIT, "yaml",
                          "aliases expand to more than %d nodes", AR__Y_MAX_NODES);
            } else if (depth == 0) {
                d->root = target;
            } else {
                rc = node_push(stack[depth - 1], target);
                stack[depth - 1]->size += target->size;
            }
            break;
        }
        default: break;
        }
        if (rc == AR_OK && n) {
            if (++total > AR__Y_MAX_NODES) {
                rc = yerr(err, d, n, AR_ELIMIT, "yaml", "more than %d nodes", AR__Y_MAX_NODES);
            } else if (depth == 0) {
                d->root = n;
            } else if ((rc = node_push(stack[depth - 1], n)) == AR_OK && n->kind == AR__Y_SCALAR) {
                stack[depth - 1]->size += 1;
            }
            if (rc == AR_OK && n->kind != AR__Y_SCALAR) {
                if (depth == AR__Y_MAX_DEPTH)
                    rc = yerr(err, d, n, AR_ELIMIT, "yaml", "nested deeper than %d",
                              AR__Y_MAX_DEPTH);
                else
                    stack[depth++] = n;
            }
            if (rc == AR_OK && anchor) {
                if (nanchors == capanchors) {
                    int cap = capanchors ? capanchors * 2 : 8;
                    anchor_t *a = realloc(anchors, (size_t)cap * sizeof *a);
                    if (!a) rc = AR_ENOMEM;
                    else { anchors = a; capanchors = cap; }
                }
                if (rc == AR_OK) {
                    anchors[nanchors].name = strdup(anchor);
                    anchors[nanchors++].node = n;
                }
            }
        }
        yaml_event_delete(&ev);
        if (rc == AR_ENOMEM) ar_error_set(err, rc, d->label, 0, 0, "out of memory");
        if (rc != AR_OK || done) break;
    }
out:
    for (int i = 0; i < nanchors; i++) free(anchors[i].name);
    free(anchors);
    return rc;
}

int ar__ydoc_load_string(const char *text, size_t len, const char *label, ar__ydoc_t **out,
                         ar_error_t *err) {
    *out = NULL;
    if (len > AR__Y_MAX_FILE_BYTES)
        return ar_error_set(err, AR_ELIMIT, label, 0, 0, "larger than %u bytes",
                            AR__Y_MAX_FILE_BYTES);
    ar__ydoc_t *d = calloc(1, sizeof *d);
    if (!d) return AR_ENOMEM;
    snprintf(d->label, sizeof d->label, "%s", label ? label : "<string>");
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        free(d);
        return AR_ERR(err, AR_ENOMEM, "out of memory");
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int rc = parse_events(&p, d, err);
    yaml_parser_delete(&p);
    if (rc != AR_OK) {
        ar__ydoc_free(d);
        return rc;
    }
    *out = d;
    return AR_OK;
}

int ar__ydoc_load_file(const char *path, ar__ydoc_t **out, ar_error_t *err) {
    *out = NULL;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return ar_error_set(err, AR_EIO, path, 0, 0, "cannot read: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return ar_error_set(err, AR_EIO, path, 0, 0, "cannot read: not a regular file");
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return ar_error_set(err, AR_EIO, path, 0, 0, "cannot read: %s", strerror(errno));
    }
    if (st.st_size > (off_t)AR__Y_MAX_FILE_BYTES) {
        fclose(f);
        return ar_error_set(err, AR_ELIMIT, path, 0, 0, "larger than %u bytes",
                            AR__Y_MAX_FILE_BYTES);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) { fclose(f); return AR_ERR(err, AR_ENOMEM, "out of memory"); }
    size_t len = fread(buf, 1, (size_t)st.st_size, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return ar_error_set(err, AR_EIO, path, 0, 0, "cannot read: I/O error");
    }
    int rc = ar__ydoc_load_string(buf, len, path, out, err);
    free(buf);
    return rc;
}

ar__ynode_t *ar__y_get(const ar__ynode_t *map, const char *key) {
    if (!map || map->kind != AR__Y_MAP) return NULL;
    for (int i = 0; i + 1 < map->n; i += 2)
        if (map->items[i]->kind == AR__Y_SCALAR && strcmp(map->items[i]->str, key) == 0)
            return map->items[i + 1];
    return NULL;
}

static const char *kind_name(ar__ykind_t k) {
    return k == AR__Y_MAP ? "a mapping" : k == AR__Y_SEQ ? "a sequence" : "a scalar";
}

int ar__y_expect(const ar__ydoc_t *d, const ar__ynode_t *n, ar__ykind_t kind, const char *field,
                 ar_error_t *err) {
    if (n && n->kind == kind) return AR_OK;
    if (!n) return yerr(err, d, n, AR_EPARSE, field, "expected %s, found nothing", kind_name(kind));
    return yerr(err, d, n, AR_EPARSE, field, "expected %s, found %s", kind_name(kind),
                kind_name(n->kind));
}

int ar__y_check_keys(const ar__ydoc_t *d, const ar__ynode_t *map, const char *const *allowed,
                     const char *ctx, ar_error_t *err) {
    AR_TRY(ar__y_expect(d, map, AR__Y_MAP, ctx, err));
    for (int i = 0; i + 1 < map->n; i += 2) {
        const ar__ynode_t *k = map->items[i];
        if (k->kind != AR__Y_SCALAR)
            return yerr(err, d, k, AR_EPARSE, ctx, "keys must be scalars");
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, k->str) == 0) { ok = 1; break; }
        char field[300];
        snprintf(field, sizeof field, "%s%s%s", ctx, ctx[0] ? "." : "", k->str);
        if (!ok) {
            char list[200] = "";
            size_t used = 0;
            for (const char *const *a = allowed; *a && used < sizeof list; a++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                         a == allowed ? "" : ", ", *a);
            return yerr(err, d, k, AR_EPARSE, field, "unknown key (expected one of: %s)", list);
        }
        for (int j = 0; j < i; j += 2)
            if (map->items[j]->kind == AR__Y_SCALAR && strcmp(map->items[j]->str, k->str) == 0)
                return yerr(err, d, k, AR_EPARSE, field, "duplicate key");
    }
    return AR_OK;
}

int ar__y_number(const ar__ydoc_t *d, const ar__ynode_t *n, const char *field, double *out,
                 ar_error_t *err) {
    AR_TRY(ar__y_expect(d, n, AR__Y_SCALAR, field, err));
    const char *s = n->str;
    if (!n->plain)
        return yerr(err, d, n, AR_EPARSE, field, "expected a number, found the string \"%s\"", s);
    /* YAML 1.1/1.2 spellings of the special values. */
    if (!strcasecmp(s, ".nan")) { *out = NAN; return AR_OK; }
    if (!strcasecmp(s, ".inf") || !strcasecmp(s, "+.inf")) { *out = INFINITY; return AR_OK; }
    if (!strcasecmp(s, "-.inf")) { *out = -INFINITY; return AR_OK; }
    double v;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        return yerr(err, d, n, AR_EPARSE, field, "expected a number, found \"%s\"", s);
    if (ar_parse_double(s[0] == '+' ? s + 1 : s, &v) != AR_OK) {
        /* nan, inf, and a number too large for a double (read as infinite) are numbers the
         * caller's range refuses with its own message */
        char *end;
        v = strtod(s, &end);
        if (end == s || *end || isfinite(v))
            return yerr(err, d, n, AR_EPARSE, field, "expected a number, found \"%s\"", s);
    }
    *out = v;
    return AR_OK;
}

int ar__y_positive(const ar__ydoc_t *d, const ar__ynode_t *n, const char *field, int code,
                   double *out, ar_error_t *err) {
    double v;
    AR_TRY(ar__y_number(d, n, field, &v, err));
    if (!isfinite(v) || !(v > 0))
        return yerr(err, d, n, code, field, "must be a positive finite number, found %s", n->str);
    *out = v;
    return AR_OK;
}

int ar__y_int(const ar__ydoc_t *d, const ar__ynode_t *n, const char *field, long min, long max,
              int code, long *out, ar_error_t *err) {
    AR_TRY(ar__y_expect(d, n, AR__Y_SCALAR, field, err));
    const char *s = n->str;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!n->plain || end == s || *end != '\0')
        return yerr(err, d, n, AR_EPARSE, field, "expected an integer, found \"%s\"", s);
    if (errno == ERANGE || v < min || v > max)
        return yerr(err, d, n, code, field, "must be between %ld and %ld, found %s", min, max, s);
    *out = v;
    return AR_OK;
}

int ar__y_bool(const ar__ydoc_t *d, const ar__ynode_t *n, const char *field, int *out,
               ar_error_t *err) {
    AR_TRY(ar__y_expect(d, n, AR__Y_SCALAR, field, err));
    if (n->plain && (!strcmp(n->str, "true") || !strcmp(n->str, "True"))) { *out = 1; return AR_OK; }
    if (n->plain && (!strcmp(n->str, "false") || !strcmp(n->str, "False"))) { *out = 0; return AR_OK; }
    return yerr(err, d, n, AR_EPARSE, field, "expected true or false, found \"%s\"", n->str);
}

int ar__y_string(const ar__ydoc_t *d, const ar__ynode_t *n, const char *field, size_t maxlen,
                 const char **out, ar_error_t *err) {
    AR_TRY(ar__y_expect(d, n, AR__Y_SCALAR, field, err));
    if (!n->str[0]) return yerr(err, d, n, AR_EPARSE, field, "must not be empty");
    if (strlen(n->str) >= maxlen)
        return yerr(err, d, n, AR_EPARSE, field, "longer than %zu characters", maxlen - 1);
    *out = n->str;
    return AR_OK;
}
