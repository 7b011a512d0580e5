/* validate: the model against measurements (every measured row predicted on the same
 * topology, placement, algorithm, size and channels, with its error and a summary) and
 * against reference files (validate/refs). Each prediction is one case of the runner. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "validate/internal.h"

typedef struct topo_cache_s {
    char spec[128];
    int nranks;
    ar_topo_t *t;
} topo_cache_t;

static ar_topo_t *cached_topo(topo_cache_t *c, int *n, int max, const char *spec, const char *model,
                              int nranks, ar_error_t *err) {
    for (int i = 0; i < *n; i++)
        if (!strcmp(c[i].spec, spec) && c[i].nranks == nranks) return c[i].t;
    if (*n >= max) { AR_ERR(err, AR_ELIMIT, "too many topologies"); return NULL; }
    ar_topo_t *t = NULL;
    if (ar_topo_open(spec, model, &t, err) != AR_OK) return NULL;
    if (nranks > 0 && nranks != t->nranks && ar_topo_place_blocks(t, nranks, err) != AR_OK) {
        ar_topo_free(t);
        return NULL;
    }
    snprintf(c[*n].spec, sizeof c[*n].spec, "%.*s", (int)sizeof c[*n].spec - 1, spec);
    c[*n].nranks = nranks;
    c[*n].t = t;
    (*n)++;
    return t;
}

/* Predict one configuration. own_defaults: channels 0 is the algorithm's own rule (rebuilding a measured plan:
 * plan_options_for), else the model's choice, as `arsim run` makes it (a reference's case). */
static int predict(const char *backend, ar_topo_t *t, const char *algo, uint64_t count, ar_dtype_t dt,
                   ar_mem_t buffer, int channels, uint64_t chunk, int own_defaults, ar_result_t *res,
                   int *plan_channels, ar_error_t *err) {
    ar_case_t c = {
        .backend = backend, .topo = t, .topology = t->name, .algo = algo, .count = count, .dtype = dt,
        .algo_opts = AR_ALGO_OPTS_DEFAULT, .run = AR_RUN_OPTS_DEFAULT, .verify = 0, .own_defaults = own_defaults,
    };
    c.algo_opts.channels = channels;
    c.algo_opts.chunk_bytes = chunk;
    c.run.buffer = buffer;
    ar_case_out_t co;
    const int rc = ar_case_run(&c, &co, err);
    if (plan_channels && co.plan) *plan_channels = co.plan->nchannels;
    *res = co.res;
    co.res.links = NULL; /* now res's */
    ar_case_out_free(&co);
    return rc;
}

typedef struct stat_s {
    char key[40];
    double *abs;
    int n, cap;
} stat_t;

static void stat_add(stat_t *s, int *ns, int max, const char *key, double v) {
    int i;
    for (i = 0; i < *ns; i++)
        if (!strcmp(s[i].key, key)) break;
    if (i == *ns) {
        if (*ns >= max) return;
        memset(&s[i], 0, sizeof s[i]);
        snprintf(s[i].key, sizeof s[i].key, "%s", key);
        (*ns)++;
    }
    if (s[i].n == s[i].cap) {
        int cap = s[i].cap ? 2 * s[i].cap : 32;
        double *nv = realloc(s[i].abs, (size_t)cap * sizeof *nv);
        if (!nv) return;
        s[i].abs = nv;
        s[i].cap = cap;
    }
    s[i].abs[s[i].n++] = fabs(v);
}

static void stat_line(FILE *f, const stat_t *s) {
    double mx = 0;
    for (int i = 0; i < s->n; i++) mx = fmax(mx, s->abs[i]);
    fprintf(f, "| %-22s | %5d | %8.2f | %8.2f |\n", s->key, s->n, ar_validate_median(s->abs, s->n), mx);
}

/* The channels and chunk options that rebuild the measured plan. A row holds the plan's
 * channel count and its largest piece (ar_plan_chunk_bytes), which the options need not
 * equal (ring counts both directions; 1stage and 2stage split a chunk among the peers), so
 * the candidates are tried until a plan has both: the defaults first, then the row's own
 * values and their neighbours, then the chunks the model's defaults choose among
 * (runner/case.c: 16 MiB down to 16 KiB by fours). A row measured before the plans' cuts
 * moved (cuts on whole lines) may have no exact twin; the plan of its channels whose largest
 * piece is within NEAR_PIECE of it then stands in (*near set), as the same plan with its
 * cuts shifted by less than a line. Neither: AR_EINVAL, the row cannot be compared. Where
 * a plan of another op count has the row's channels and largest piece too (both given), the
 * first is taken, ops[0] its op count and ops[1] the other's: the row does not tell them apart. */
#define NEAR_PIECE 0.02
static int plan_options_for(const ar_topo_t *t, const ar_vrow_t *m, int *ch_opt, uint64_t *chunk_opt, int *near,
                            uint64_t ops[2], ar_error_t *err) {
    const int chans[] = {0, m->channels, m->channels / 2, m->channels * 2};
    uint64_t chunks[4 + 7] = {0, m->chunk_bytes, m->chunk_bytes * (uint64_t)m->nranks, m->chunk_bytes / 2};
    int nchunks = 4;
    for (uint64_t c = (uint64_t)16 << 20; c >= (uint64_t)16 << 10; c /= 4) chunks[nchunks++] = c;
    *ch_opt = 0, *chunk_opt = 0, *near = 0;
    ops[0] = ops[1] = 0;
    int exact = 0;
    double best_off = NEAR_PIECE;
    uint64_t def_piece = 0;
    int def_n = 0;
    for (int k = 0; k < nchunks; k++) {
        if (k > 0 && chunks[k] == 0) continue;
        for (size_t i = 0; i < sizeof chans / sizeof chans[0]; i++) {
            if (i > 0 && chans[i] <= 0) continue;
            ar_algo_opts_t ao = AR_ALGO_OPTS_DEFAULT;
            ao.channels = chans[i];
            ao.chunk_bytes = chunks[k];
            ar_plan_t *plan = NULL;
            const int rc = ar_algo_build(m->algo, t, m->count, m->dtype, &ao, &plan, err);
            if (rc != AR_OK) {
                if (i == 0 && k == 0) return rc;
                continue;
            }
            const int n = plan->nchannels;
            const uint64_t piece = ar_plan_chunk_bytes(plan), nops = plan->nops;
            ar_plan_free(plan);
            if (k == 0 && i == 0) def_n = n, def_piece = piece;
            if ((n == m->channels || m->channels == 0) && (piece == m->chunk_bytes || m->chunk_bytes == 0)) {
                if (!exact) {
                    *ch_opt = chans[i], *chunk_opt = chunks[k], *near = 0;
                    ops[0] = nops;
                    exact = 1;
                } else if (nops != ops[0] && !ops[1] && m->channels && m->chunk_bytes) {
                    ops[1] = nops;
                }
                continue;
            }
            const double off = m->chunk_bytes ? fabs((double)piece - (double)m->chunk_bytes) / (double)m->chunk_bytes : 1;
            if (!exact && n == m->channels && off <= best_off) {
                *ch_opt = chans[i], *chunk_opt = chunks[k], *near = 1;
                best_off = off;
            }
        }
    }
    if (exact || *near) return AR_OK;
    return AR_ERR(err, AR_EINVAL,
                  "no plan of this build has the measured %d channels and largest piece %" PRIu64
                  " B (the defaults build %d channels, %" PRIu64 " B): measured with other cuts; measure again",
                  m->channels, m->chunk_bytes, def_n, def_piece);
}

/* A measured row that recorded its GPUs' NVLink links (links_detected) is predicted only
 * on a topology that gives its devices as many: otherwise every link term would be of
 * links the measurement did not have (full:2 of one lane against NV18: 18x too slow). */
static int links_match(const ar_topo_t *t, const ar_vrow_t *m, ar_error_t *err) {
    if (m->nvlinks < 0 || t->ndevices < 2) return AR_OK;
    int lanes = 0;
    for (int i = 0; i < t->nlinks; i++)
        if (t->links[i].kind == 0 && (t->links[i].a == 0 || t->links[i].b == 0)) lanes += t->links[i].count;
    if (lanes == m->nvlinks) return AR_OK;
    return AR_ERR(err, AR_EINVAL,
                  "measured on GPUs with %d NVLink links up each (links_detected NV%d), but topology %s gives "
                  "device 0 %d lane%s of %s: predict on a topology of the measured links (full:N and switch:N take "
                  "the model's lanes)",
                  m->nvlinks, m->nvlinks, m->topology, lanes, lanes == 1 ? "" : "s",
                  t->model && t->model->nlinks ? t->model->links[0].name : "its first link kind");
}

/* The rows the model misses most, with what it predicted each term to cost: where to look. */
#define WORST_ROWS 5
typedef struct worst_s {
    double abs_err, err, measured_us, predicted_us, terms_us[AR_NTERM];
    int line;
    char what[160];
} worst_t;

static void worst_add(worst_t *w, int *n, const worst_t *row) {
    int at = *n < WORST_ROWS ? (*n)++ : WORST_ROWS;
    if (at == WORST_ROWS) {
        if (row->abs_err <= w[WORST_ROWS - 1].abs_err) return;
        at = WORST_ROWS - 1;
    }
    while (at > 0 && w[at - 1].abs_err < row->abs_err) w[at] = w[at - 1], at--;
    w[at] = *row;
}

static void worst_table(FILE *f, const worst_t *w, int n) {
    if (!n) return;
    fprintf(f, "\n## The %d worst rows, and the predicted time by term (us)\n\n", n);
    fprintf(f, "| line | case | measured | predicted | error %% |");
    for (int t = 0; t < AR_NTERM; t++) fprintf(f, " %s |", ar_term_name((ar_term_t)t));
    fprintf(f, "\n|---:|---|---:|---:|---:|");
    for (int t = 0; t < AR_NTERM; t++) fprintf(f, "---:|");
    fputc('\n', f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "| %d | %s | %.2f | %.2f | %+.1f |", w[i].line, w[i].what, w[i].measured_us, w[i].predicted_us,
                w[i].err);
        for (int t = 0; t < AR_NTERM; t++) fprintf(f, " %.2f |", w[i].terms_us[t]);
        fputc('\n', f);
    }
}

int ar_validate_compare(const ar_compare_t *cx, const ar_vrows_t *meas, ar_error_t *err_out) {
    const char *backend = cx->backend, *model = cx->model, *meas_name = cx->measured_name;
    if (!ar_backend_find(backend)) return AR_ERR(err_out, AR_ENOTSUP, "--predict-with %s: not in this build", backend);
    if (!model)
        return AR_ERR(err_out, AR_EINVAL, "no model to predict with: use --model MODEL.yaml (the file "
                                          "`arsim calibrate` wrote)");
    FILE *csv = cx->csv;
    char date[64];
    ar_utc_date(date, sizeof date);
    fprintf(csv, "# arsim %s validate: measured (cuda) vs predicted (%s on model %s)\n", PACKAGE_VERSION,
            backend, model);
    fprintf(csv, "# measured: %s\n# device: %s\n# measured on: %s\n# predicted on: %s\n", meas_name,
            meas->device[0] ? meas->device : "unknown", meas->date[0] ? meas->date : "unknown", date);
    fputs("topology,nranks,ranks_per_device,algo,dtype,buffer,bytes,count,channels,chunk_bytes,"
          "measured_us,predicted_us,error_pct,link_us,memory_us,reduce_us,sync_us,launch_us,"
          "predict_backend,model\n", csv);
    topo_cache_t cache[32];
    int ncache = 0, rc = AR_OK, nok = 0;
    stat_t by_algo[32], by_place[16], all[1];
    int nalgo = 0, nplace = 0, nall = 0;
    char model_name[AR_NAME_MAX] = "";
    double t0 = ar_now_s();
    int nbad = 0, nnear = 0, nambiguous = 0;
    char bad_lines[160] = "";
    worst_t worst[WORST_ROWS];
    int nworst = 0;
    for (int i = 0; i < meas->n; i++) {
        const ar_vrow_t *mrow = &meas->rows[i];
        /* bench's labels: NAME/CHANNELS where channels were given, auto:NAME/CHANNELS where
         * auto chose; the row's channels and chunk hold the plan's either way */
        ar_vrow_t mcopy = *mrow;
        const ar_vrow_t *m = &mcopy;
        char base[sizeof mcopy.algo];
        snprintf(base, sizeof base, "%s", !strncmp(mrow->algo, "auto:", 5) ? mrow->algo + 5 : mrow->algo);
        base[strcspn(base, "/")] = 0;
        snprintf(mcopy.algo, sizeof mcopy.algo, "%s", base);
        ar_error_t err;
        ar_error_clear(&err);
        ar_topo_t *t = cached_topo(cache, &ncache, 32, m->topology, model, m->nranks, &err);
        if (!t) {
            *err_out = err;
            rc = err.code;
            goto out;
        }
        snprintf(model_name, sizeof model_name, "%s", t->model->name);
        ar_result_t res;
        int pch = 0;
        /* the options that rebuild the measured plan (plan_options_for) */
        uint64_t pchunk = 0;
        int near = 0;
        uint64_t ops[2];
        int prc = links_match(t, m, &err);
        if (prc == AR_OK) prc = plan_options_for(t, m, &pch, &pchunk, &near, ops, &err);
        if (prc == AR_OK)
            prc = predict(backend, t, m->algo, m->count, m->dtype, m->buffer, pch, pchunk, 1, &res, &pch, &err);
        else
            memset(&res, 0, sizeof res);
        if (prc != AR_OK) {
            char buf[600];
            fprintf(cx->notes, "validate: %s:%d: %s %d ranks %" PRIu64 " B: cannot predict: %s\n", meas_name,
                    m->line, mrow->algo, m->nranks, m->bytes, ar_error_format(&err, buf, sizeof buf));
            ar_result_free(&res);
            if (nbad++ < 8) {
                const size_t at = strlen(bad_lines);
                snprintf(bad_lines + at, sizeof bad_lines - at, "%s%d", at ? ", " : "", m->line);
            }
            continue;
        }
        if (pch != m->channels)
            fprintf(cx->notes, "validate: %s:%d: the rebuilt plan has %d channels, the measured one %d\n",
                    meas_name, m->line, pch, m->channels);
        nnear += near;
        if (ops[1]) {
            nambiguous++;
            fprintf(cx->notes,
                    "validate: %s:%d: plans of %" PRIu64 " and %" PRIu64 " ops both have the measured %d channels and "
                    "largest piece %" PRIu64 " B: predicted on the first (the options tried first)\n",
                    meas_name, m->line, ops[0], ops[1], m->channels, m->chunk_bytes);
        }
        double pred_us = res.time_s * 1e6, e = ar_validate_err_pct(m->time_us, pred_us);
        int rpd = t->ndevices ? m->nranks / t->ndevices : 1;
        fprintf(csv, "%s,%d,%d,%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%d,%" PRIu64 ",%.3f,%.3f,%.2f,%.3f,%.3f,%.3f,%.3f,%.3f,%s,%s\n",
                m->topology, m->nranks, rpd, m->algo, ar_dtype_name(m->dtype), ar_mem_name(m->buffer),
                m->bytes, m->count, m->channels, m->chunk_bytes, m->time_us, pred_us, e,
                res.terms_s[AR_TERM_LINK] * 1e6, res.terms_s[AR_TERM_MEMORY] * 1e6,
                res.terms_s[AR_TERM_REDUCE] * 1e6, res.terms_s[AR_TERM_SYNC] * 1e6,
                res.terms_s[AR_TERM_LAUNCH] * 1e6, backend, t->model->name);
        worst_t w = {.abs_err = fabs(e), .err = e, .measured_us = m->time_us, .predicted_us = pred_us, .line = m->line};
        for (int tm = 0; tm < AR_NTERM; tm++) w.terms_us[tm] = res.terms_s[tm] * 1e6;
        snprintf(w.what, sizeof w.what, "%s, %d rank%s, %d per device, %s, %" PRIu64 " B, %d channels", m->algo,
                 m->nranks, m->nranks == 1 ? "" : "s", rpd, ar_dtype_name(m->dtype), m->bytes, m->channels);
        worst_add(worst, &nworst, &w);
        ar_result_free(&res);
        char key[40];
        stat_add(by_algo, &nalgo, 32, m->algo, e);
        snprintf(key, sizeof key, "%d rank%s per device", rpd, rpd == 1 ? "" : "s");
        stat_add(by_place, &nplace, 16, key, e);
        stat_add(all, &nall, 1, "all rows", e);
        nok++;
    }
    fflush(csv);
    for (int k = 0; k < 2; k++) {
        FILE *sf = cx->summary[k];
        if (!sf) continue;
        {
            fprintf(sf, "# Model vs measured allreduce: summary\n\n");
            fprintf(sf, "- measured: `%s`, on %s, %s\n", meas_name, meas->device[0] ? meas->device : "unknown device",
                    meas->date[0] ? meas->date : "date unknown");
            fprintf(sf, "- predicted: backend `%s` on model `%s` (`%s`), %s\n", backend, model_name, model, date);
            fprintf(sf, "- rows compared: %d of %d (prediction wall time %.1f s)\n", nok, meas->n, ar_now_s() - t0);
            if (nnear)
                fprintf(sf, "- of them %d measured on plans cut a little differently, compared with this build's plan of "
                        "their channels whose largest piece is within %.0f%% of theirs\n", nnear, NEAR_PIECE * 100);
            if (nambiguous)
                fprintf(sf, "- of them %d whose channels and largest piece plans of different op counts share: "
                        "predicted on the first the options give (named on stderr)\n", nambiguous);
            fprintf(sf, "- error = (predicted - measured) / measured; |error| in percent\n\n");
            fprintf(sf, "| %-22s | %5s | %8s | %8s |\n", "algorithm", "rows", "median", "max");
            fprintf(sf, "|------------------------|-------|----------|----------|\n");
            for (int a = 0; a < nalgo; a++) stat_line(sf, &by_algo[a]);
            for (int a = 0; a < nplace; a++) stat_line(sf, &by_place[a]);
            if (nall) stat_line(sf, &all[0]);
            if (nall) {
                double mx = 0;
                for (int j = 0; j < all[0].n; j++) mx = fmax(mx, all[0].abs[j]);
                double med = ar_validate_median(all[0].abs, all[0].n);
                fprintf(sf, "\nTarget (median |error| <= 5%%, max <= 15%%): median %.2f%% %s, max %.2f%% %s\n",
                        med, med <= 5 ? "met" : "NOT met", mx, mx <= 15 ? "met" : "NOT met");
            }
            worst_table(sf, worst, nworst);
        }
    }
    if (nbad && !cx->allow_partial && rc == AR_OK)
        rc = AR_ERR(err_out, AR_EINVAL,
                    "%s: %d of %d measured rows could not be compared (line%s %s%s; why above): "
                    "--allow-partial compares the others",
                    meas_name, nbad, meas->n, nbad > 1 ? "s" : "", bad_lines, nbad > 8 ? ", ..." : "");
out:
    for (int i = 0; i < ncache; i++) ar_topo_free(cache[i].t);
    for (int i = 0; i < nalgo; i++) free(by_algo[i].abs);
    for (int i = 0; i < nplace; i++) free(by_place[i].abs);
    for (int i = 0; i < nall; i++) free(all[i].abs);
    return rc;
}

/* How a reference's topology name maps onto what arsim can simulate. */
static const struct {
    const char *name, *spec, *model, *note;
} ref_topos[] = {
    {"h100_pair", "h200_pair", "h100_sxm", "h200_pair topology (2 GPUs, NV18) on the h100_sxm model"},
    {"single_device", "torus_2d_3x2", "accel_tcm",
     "FSIM's single device: its 6 compute units as the earlier harness's 6-device torus_2d 3x2, accel_tcm model"},
};

int ar_validate_refs_compare(const ar_refs_compare_t *cx, int *bad, ar_error_t *err_out) {
    ar_refs_t refs = {0};
    ar_error_t err;
    ar_error_clear(&err);
    *bad = 0;
    const char *dir = cx->dir, *backend = cx->backend, *mpath = cx->meas_name;
    if (ar_validate_refs_load_dir(dir, &refs, err_out) != AR_OK) return err_out->code;
    const ar_vrows_t meas = *cx->meas;
    FILE *csv = cx->csv, *table = cx->table;
    if (csv) {
        fprintf(csv, "# arsim %s validate --refs: references (%s) beside the model (%s backend)%s%s\n",
                PACKAGE_VERSION, dir, backend, meas.n ? " and measurements from " : "", meas.n ? mpath : "");
        fputs("source,system,topology,algorithm,dtype,bytes,buffer_kind,ref_us,model_topology,model,"
              "model_algo,model_us,model_over_ref,measured_us,measured_over_ref,measured_device,note\n", csv);
    }
    fprintf(table, "# arsim validate --refs: %d reference rows from %s; model predictions with the %s backend\n",
            refs.n, dir, backend);
    if (meas.n) fprintf(table, "# measurements from %s (%s, %s)\n", mpath, meas.device, meas.date);
    fprintf(table, "%-26s %-11s %6s %6s %12s %12s %9s %12s %9s\n", "source", "model algo", "size", "dtype", "ref(us)",
            "model(us)", "model/ref", "measured(us)", "meas/ref");
    for (int i = 0; i < refs.n; i++) {
        const ar_ref_t *r = &refs.rows[i];
        char note[512] = "";
        const char *spec = r->topology, *model = cx->model;
        for (size_t k = 0; k < sizeof ref_topos / sizeof ref_topos[0]; k++)
            if (!strcmp(r->topology, ref_topos[k].name)) {
                spec = ref_topos[k].spec;
                if (!model) model = ref_topos[k].model;
                snprintf(note, sizeof note, "%s", ref_topos[k].note);
            }
        ar_dtype_t dt = r->has_dtype ? r->dtype : AR_FP32;
        ar_mem_t buf = r->has_buffer ? r->buffer : AR_MEM_HBM;
        uint64_t bytes = r->bytes;
        if (!r->has_dtype) strncat(note, "; dtype not given: fp32", sizeof note - strlen(note) - 1);
        if (!bytes) {
            bytes = 49152 * ar_dtype_size(dt);
            strncat(note, "; size not given: n_elem 49152, the largest of the earlier harness's sweep",
                    sizeof note - strlen(note) - 1);
        }
        if (!r->has_buffer) strncat(note, "; buffer kind not given: hbm", sizeof note - strlen(note) - 1);
        ar_topo_t *t = NULL;
        if (ar_topo_open(spec, model, &t, &err) != AR_OK) {
            char b[600];
            fprintf(cx->notes, "validate: %s:%d: topology '%s': %s\n", r->file, r->line, r->topology,
                    ar_error_format(&err, b, sizeof b));
            ++*bad;
            continue;
        }
        uint64_t count = bytes / ar_dtype_size(dt);
        /* Which of our algorithms: the named one; for multimem (never run on the GPUs) our
         * 2stage; for NCCL or none named, the fastest that fits. */
        const char *algos[32];
        int na = 0;
        if (r->algorithm[0] && ar_algo_find(r->algorithm)) {
            algos[na++] = r->algorithm;
        } else if (!strcmp(r->algorithm, "multimem")) {
            algos[na++] = "2stage";
            strncat(note, "; multimem compared with 2stage", sizeof note - strlen(note) - 1);
        } else {
            for (const ar_algo_t *const *a = ar_algo_all(); *a && na < 32; a++) algos[na++] = (*a)->name;
            strncat(note, "; model: fastest arsim algorithm that fits", sizeof note - strlen(note) - 1);
        }
        double best = INFINITY;
        const char *best_algo = "";
        for (int a = 0; a < na; a++) {
            ar_result_t res;
            ar_error_t e2;
            ar_error_clear(&e2);
            if (predict(backend, t, algos[a], count, dt, buf, 0, 0, 0, &res, NULL, &e2) == AR_OK &&
                res.time_s * 1e6 < best) {
                best = res.time_s * 1e6;
                best_algo = ar_algo_find(algos[a])->name;
            }
            ar_result_free(&res);
        }
        double meas_us = 0;
        for (int k = 0; k < meas.n; k++) {
            const ar_vrow_t *m = &meas.rows[k];
            /* NCCL references beside NCCL measured here; others beside our algorithm. */
            int is_nccl = !strcmp(r->algorithm, "nccl");
            if (!strcmp(m->topology, t->name) && m->nranks == t->nranks && m->dtype == dt &&
                m->bytes == bytes && m->buffer == buf &&
                (is_nccl ? !strcmp(m->backend, "nccl")
                         : !strcmp(m->backend, "cuda") && !strcmp(m->algo, best_algo)))
                meas_us = m->time_us;
        }
        char sz[32], ms[32] = "-", mr[32] = "-", mo[32] = "-";
        ar_size_format(bytes, sz, sizeof sz);
        if (meas_us > 0) {
            snprintf(ms, sizeof ms, "%.2f", meas_us);
            snprintf(mr, sizeof mr, "%.4f", meas_us / r->latency_us);
        }
        if (isfinite(best)) snprintf(mo, sizeof mo, "%.4f", best / r->latency_us);
        fprintf(table, "%-26.26s %-11.11s %6s %6s %12.2f %12.2f %9s %12s %9s\n", r->source, best_algo, sz,
               ar_dtype_name(dt), r->latency_us, isfinite(best) ? best : NAN, mo, ms, mr);
        if (csv) {
            char bb[32];
            snprintf(bb, sizeof bb, "%" PRIu64, r->bytes);
            ar_csv_put(csv, r->source); fputc(',', csv);
            ar_csv_put(csv, r->system); fputc(',', csv);
            ar_csv_put(csv, r->topology); fputc(',', csv);
            ar_csv_put(csv, r->algorithm); fputc(',', csv);
            fprintf(csv, "%s,%s,%s,%.3f,", r->has_dtype ? ar_dtype_name(r->dtype) : "", r->bytes ? bb : "",
                    r->has_buffer ? ar_mem_name(r->buffer) : "", r->latency_us);
            fprintf(csv, "%s,%s,%s,", t->name[0] ? t->name : spec, t->model->name, best_algo);
            if (isfinite(best)) fprintf(csv, "%.3f,%s,", best, mo); else fputs(",,", csv);
            if (meas_us > 0) fprintf(csv, "%.3f,%s,", meas_us, mr); else fputs(",,", csv);
            ar_csv_put(csv, meas_us > 0 ? meas.device : ""); fputc(',', csv);
            ar_csv_put(csv, note[0] == ';' ? note + 2 : note);
            fputc('\n', csv);
        }
        if (note[0]) fprintf(table, "#   %s\n", note[0] == ';' ? note + 2 : note);
        ar_topo_free(t);
    }
    ar_validate_refs_free(&refs);
    return AR_OK;
}
