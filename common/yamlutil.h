/* common: a small YAML reader on libyaml for the model and topology files.
 *
 * The whole document is read into a node tree (scalars, sequences, mappings)
 * that remembers each node's line and column, so every schema check can report
 * `file:line:col: field: why`. Limits keep hostile input cheap: the file size,
 * the nesting depth, and the total number of nodes aliases expand to (a
 * "billion laughs" document is refused, not walked). Internal to libarsim. */
#ifndef ARSIM_COMMON_YAMLUTIL_H
#define ARSIM_COMMON_YAMLUTIL_H

#include <stddef.h>
#include "arsim/error.h"

#define AR__Y_MAX_FILE_BYTES (4u << 20) /* 4 MiB */
#define AR__Y_MAX_DEPTH 64
#define AR__Y_MAX_NODES 200000           /* nodes including alias expansion */

typedef enum ar__ykind_e { AR__Y_SCALAR = 1, AR__Y_SEQ, AR__Y_MAP } ar__ykind_t;

typedef struct ar__ynode_s {
    ar__ykind_t kind;
    int line, col;               /* 1-based */
    char *str;                   /* scalar text */
    int plain;                   /* scalar written without quotes */
    struct ar__ynode_s **items;  /* seq: n items; map: n pairs, key items[2i], value items[2i+1] */
    int n;
    size_t cap;
    long size;                   /* nodes in this subtree, aliases expanded */
    int open;                    /* still being read (a recursive alias refers to it) */
} ar__ynode_t;

typedef struct ar__ydoc_s {
    char label[256];             /* file name used in messages */
    ar__ynode_t *root;           /* NULL for an empty document */
    ar__ynode_t **all;           /* every node, for freeing */
    int nall;
    size_t capall;
} ar__ydoc_t;

/* Read a file (AR_EIO when unreadable, AR_ELIMIT when too large) or a string. */
int ar__ydoc_load_file(const char *path, ar__ydoc_t **out, ar_error_t *err);
int ar__ydoc_load_string(const char *text, size_t len, const char *label, ar__ydoc_t **out,
                         ar_error_t *err);
void ar__ydoc_free(ar__ydoc_t *d);

/* Report "field: why" at node n (or at the document start when n is NULL). */
int ar__y_error(ar_error_t *err, const ar__ydoc_t *d, const ar__ynode_t *n, int code,
                const char *field, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Mapping lookup (NULL when absent). */
ar__ynode_t *ar__y_get(const ar__ynode_t *map, const char *key);
/* AR_EPARSE naming the first key of map not in the NULL-terminated allowed list;
 * ctx is the field path of the mapping ("" at the top). */
int ar__y_check_keys(const ar__ydoc_t *d, const ar__ynode_t *map, const char *const *allowed,
                     const char *ctx, ar_error_t *err);

/* Type checks: AR_EPARSE "expected a mapping/sequence/scalar". */
int ar__y_expect(const ar__ydoc_t *d, const ar__ynode_t *n, ar__ykind_t kind, const char *field,
                 ar_error_t *err);
/* A plain scalar number. AR_EPARSE when not a number; NaN/inf are returned as such
 * (ar__y_positive rejects them). */
int ar__y_number(const ar__ydoc_t *d, const ar__ynode_t *n, const char *field, double *out,
                 ar_error_t *err);
/* A finite number > 0; `code` is the status for out-of-range values. */
int ar__y_positive(const ar__ydoc_t *d, const ar__ynode_t *n, const char *field, int code,
                   double *out, ar_error_t *err);
/* An integer in [min, max]; `code` is the status for out-of-range values. */
int ar__y_int(const ar__ydoc_t *d, const ar__ynode_t *n, const char *field, long min, long max,
              int code, long *out, ar_error_t *err);
int ar__y_bool(const ar__ydoc_t *d, const ar__ynode_t *n, const char *field, int *out,
               ar_error_t *err);
/* A scalar string, non-empty, at most maxlen-1 characters. */
int ar__y_string(const ar__ydoc_t *d, const ar__ynode_t *n, const char *field, size_t maxlen,
                 const char **out, ar_error_t *err);

/* Shared by the model and topology loaders: the file a model name or path refers
 * to; 0 when a bare name is not a shipped model. */
int ar__model_resolve(const char *name_or_path, char *path, size_t len);

#endif
