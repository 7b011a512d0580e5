/* arsim: hardware models. Loaded from model/<name>.yaml; the keys: arsim/model_keys.h.
 *
 * A model names the terms from which every op's time is built. All values are
 * stored in SI-friendly units (bytes, GB/s = 1e9 bytes/s, ns, GHz); the clock
 * turns them into cycles for reporting. */
#ifndef ARSIM_MODEL_H
#define ARSIM_MODEL_H

#include <stddef.h>
#include <stdio.h>
#include "arsim/model_keys.h"
#include "arsim/types.h"

#define AR_NAME_MAX 64

/* Fields from the key table (arsim/model_keys.h): one double per key of a section. */
#define AR__MK_ROOT_FIELD(sect, key, unit, req, lo, hi, doc) AR__MK_FIELD_##sect(key)
#define AR__MK_LEVEL_FIELD(sect, key, unit, req, lo, hi, doc) AR__MK_LFIELD_##sect(key)
#define AR__MK_LINK_FIELD(sect, key, unit, req, lo, hi, doc) AR__MK_KFIELD_##sect(key)
#define AR__MK_FIELD_ROOT(key) double key;
#define AR__MK_FIELD_LEVEL(key)
#define AR__MK_FIELD_LINK(key)
#define AR__MK_LFIELD_ROOT(key)
#define AR__MK_LFIELD_LEVEL(key) double key;
#define AR__MK_LFIELD_LINK(key)
#define AR__MK_KFIELD_ROOT(key)
#define AR__MK_KFIELD_LEVEL(key)
#define AR__MK_KFIELD_LINK(key) double key;

typedef struct ar_mem_level_s {
    int present; /* 0 when the device has no such level */
    AR_MODEL_KEYS(AR__MK_LEVEL_FIELD)
} ar_mem_level_t;

typedef struct ar_link_kind_s {
    char name[AR_NAME_MAX]; /* "nvlink4", "pcie5", "mesh_link" ... */
    AR_MODEL_KEYS(AR__MK_LINK_FIELD)
} ar_link_kind_t;

/* Where a calibrated model's values came from: the `calibration:` block `arsim
 * calibrate` writes (a hand-written file has none: gpus 0). Every key was measured on
 * `device` with that driver and runtime at `date`, except the keys marked assumed. */
#define AR_MODEL_MAX_KEYS 96
typedef struct ar_model_calib_s {
    int gpus;                  /* GPUs the benchmarks ran on (1: no link terms measured); 0: none */
    char device[256], driver[96], runtime[16], date[64];
    unsigned long long assumed[AR_MODEL_MAX_KEYS]; /* bit l of [i]: key i of level or link kind l
                                                    * (bit 0 for a ROOT key) was assumed */
} ar_model_calib_t;

/* A hardware model: the terms from which every op's time is built. What each key
 * means, its unit and range: arsim/model_keys.h (or `arsim model keys`). */
typedef struct ar_model_s {
    char name[AR_NAME_MAX];
    char path[512];              /* file it came from ("" for built-in) */
    ar_mem_level_t mem[AR_NMEM]; /* tcm, sram, hbm */
    ar_link_kind_t *links;       /* link kinds this model defines */
    int nlinks;
    AR_MODEL_KEYS(AR__MK_ROOT_FIELD)
    ar_model_calib_t calib;
} ar_model_t;

/* The key table as data. */
typedef enum { AR_MK_ROOT, AR_MK_LEVEL, AR_MK_LINK } ar_model_sect_t;
typedef struct ar_model_key_s {
    const char *name;
    ar_model_sect_t section;
    size_t offset;      /* of the double in ar_model_t, ar_mem_level_t or ar_link_kind_t */
    const char *unit;   /* ns, GB/s, GHz, bytes */
    int required;
    double min, max;    /* accepted range in the key's unit (an optional key may be 0) */
    const char *meaning;
} ar_model_key_t;
/* Every key, in the table's order; *n their count. */
const ar_model_key_t *ar_model_keys(int *n);
/* The key by name (in any section), or NULL. */
const ar_model_key_t *ar_model_key_find(const char *name);
/* Factor from a key's unit to SI (ns -> s 1e-9, GB/s -> bytes/s 1e9, GHz -> Hz 1e9, bytes 1). */
double ar_model_unit_si(const char *unit);
/* The value of key k in m (ROOT), level l (LEVEL) or link kind l (LINK), and where it lives. */
double ar_model_get(const ar_model_t *m, const ar_model_key_t *k, int l);
double *ar_model_slot(ar_model_t *m, const ar_model_key_t *k, int l);
/* Write m as a model YAML file: every key of the table, in its order, each value in the
 * shortest form that reads back the same. note(k, l, ctx) (may be NULL) gives the
 * comment of key k of level or link kind l (k NULL: level l's `present: false`), lines
 * split at '\n'; NULL or "": none. AR_OK or AR_EIO. */
int ar_model_write(FILE *f, const ar_model_t *m, const char *description,
                   const char *(*note)(const ar_model_key_t *k, int l, void *ctx), void *ctx);

/* Every key of m, once per level it has (present levels only) or link kind it defines:
 * fn(m, k, l, ctx) for each, in the table's order, until one returns non-zero (returned). */
int ar_model_each_key(const ar_model_t *m, int (*fn)(const ar_model_t *m, const ar_model_key_t *k, int l, void *ctx),
                      void *ctx);
/* The key's name as `arsim model show` and the calibration block spell it:
 * "clock_ghz", "memory.hbm.read_gbps", "links.nvlink4.bw_gbps". */
const char *ar_model_key_path(const ar_model_t *m, const ar_model_key_t *k, int l, char *buf, size_t len);
/* Write m->calib as the `calibration:` block (nothing when m->calib.gpus is 0). */
int ar_model_write_calibration(FILE *f, const ar_model_t *m);

/* name: a shipped model ("h100_sxm", "h200_sxm", "accel_tcm") or a path to a YAML file. */
int ar_model_load(const char *name_or_path, ar_model_t **out, ar_error_t *err);
int ar_model_load_string(const char *yaml, const char *label, ar_model_t **out, ar_error_t *err);
void ar_model_free(ar_model_t *m);
/* A copy of m of its own (AR_ENOMEM where out of memory). */
int ar_model_copy(const ar_model_t *m, ar_model_t **out);
/* Index of a link kind by name, or -1. */
int ar_model_link_kind(const ar_model_t *m, const char *name);
/* Names of the shipped models, NULL-terminated. */
const char *const *ar_model_shipped(void);
/* The same as "a, b, c" in buf (for messages). */
const char *ar_model_shipped_list(char *buf, size_t len);
/* Directory searched for shipped models: ar_data_path("model"). */
const char *ar_model_dir(void);

/* Per-channel rate bound on remote reads: inflight bytes over read latency, GB/s. */
double ar_model_chan_read_gbps(const ar_model_t *m);
/* Bytes of read requests each byte pulled over a link of kind k sends the other way:
 * bw_gbps / pull_gbps - 1 (pull_gbps is what the data keeps of a direction that carries the
 * other side's requests too); 0 where pulls take the link's full rate. */
double ar_model_pull_request_share(const ar_link_kind_t *k);

#endif
