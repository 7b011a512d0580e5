/* cli: the shared output of run, sweep and bench: the nccl-tests-shaped table, JSON
 * rows (the CSV's columns; the CSV itself is arsim/csv.h's), and --breakdown. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli/opts.h"

/* nccl-tests' columns (size, count, type, redop, root, then time, algbw, busbw and
 * #wrong under "out-of-place"), with the algorithm and the channels and chunk its plan
 * used between them. Plans read IN and write OUT: there is no in-place half. */
#define TABLE_COLS "%13s %6s %6s %5s %14s %5s %8s %10s %8s %8s %7s %10s %6s\n"
#define TABLE_ROW "%12s " TABLE_COLS
#define TABLE_HEAD "#%11s " TABLE_COLS

void ar_cli_table_header(FILE *f) {
    char units[160];
    fprintf(f, "#%76s\n", "out-of-place");
    fprintf(f, TABLE_HEAD, "size", "count", "type", "redop", "root", "algo", "chan", "chunk", "time",
            "algbw", "busbw", "#wrong", "bound", "eff");
    snprintf(units, sizeof units, TABLE_HEAD, "(B)", "(elements)", "", "", "", "", "", "(B)", "(us)", "(GB/s)",
             "(GB/s)", "", "(us)", "(%)");
    size_t n = strlen(units) - 1; /* its line break, then the blank columns' spaces, trimmed */
    while (n > 0 && units[n - 1] == ' ') n--;
    fprintf(f, "%.*s\n", (int)n, units);
}

void ar_cli_table_row(FILE *f, const ar_row_t *r) {
    const double t = r->res->time_s;
    char size[24], count[24], root[16], chan[16], chunk[24], time[32], alg[32], bus[32], wrong[24], bound[32],
        eff[16];
    snprintf(size, sizeof size, "%" PRIu64, r->bytes);
    snprintf(count, sizeof count, "%" PRIu64, r->count);
    snprintf(root, sizeof root, "%d", r->root);
    snprintf(chan, sizeof chan, "%d", r->channels);
    ar_size_format(r->chunk_bytes, chunk, sizeof chunk);
    snprintf(time, sizeof time, "%.2f", t * 1e6);
    snprintf(alg, sizeof alg, "%.2f", ar_algbw_gbps(r->bytes, t));
    snprintf(bus, sizeof bus, "%.2f", ar_busbw_coll_gbps(r->coll, r->bytes, t, r->nranks));
    if (r->res->checked) snprintf(wrong, sizeof wrong, "%" PRIu64, r->res->wrong);
    else snprintf(wrong, sizeof wrong, "N/A");
    const double e = ar_row_efficiency(r);
    snprintf(bound, sizeof bound, r->bound_s > 0 ? "%.2f" : "-", r->bound_s * 1e6);
    snprintf(eff, sizeof eff, isfinite(e) ? "%.1f" : "-", e * 100);
    fprintf(f, TABLE_ROW, size, count, ar_dtype_name(r->dtype), ar_row_redop(r), root, r->algo, chan, chunk, time,
            alg, bus, wrong, bound, eff);
}

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* JSON has no NaN or infinity. */
static void json_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fputs("null", f);
}

void ar_cli_json_begin(FILE *f) { fputs("[\n", f); }
void ar_cli_json_end(FILE *f) { fputs("\n]\n", f); }

void ar_cli_json_row(FILE *f, const ar_row_t *r, int first) {
    const ar_result_t *res = r->res;
    double t = res->time_s;
    static const char *const term_keys[AR_NTERM] = {"link_us", "memory_us", "reduce_us",
                                                    "sync_us", "launch_us", "compute_us"};
    fputs(first ? "  {" : ",\n  {", f);
    fputs("\"backend\": ", f); json_str(f, r->backend);
    fputs(", \"topology\": ", f); json_str(f, r->topology);
    fputs(", \"model\": ", f); json_str(f, r->model);
    fprintf(f, ", \"nranks\": %d, \"op\": \"%s\", \"gemm\": ", r->nranks, ar_coll_name(r->coll));
    char gemm[96];
    ar_row_gemm(r, gemm, sizeof gemm);
    if (gemm[0]) json_str(f, gemm);
    else fputs("null", f);
    fputs(", \"algo\": ", f);
    json_str(f, r->algo);
    fprintf(f, ", \"dtype\": \"%s\", \"redop\": \"%s\", \"root\": %d, \"buffer\": \"%s\", \"bytes\": %" PRIu64
               ", \"count\": %" PRIu64 ", \"channels\": %d, \"chunk_bytes\": %" PRIu64,
            ar_dtype_name(r->dtype), ar_row_redop(r), r->root, ar_mem_name(r->buffer), r->bytes, r->count, r->channels,
            r->chunk_bytes);
    fputs(", \"time_us\": ", f); json_num(f, t * 1e6);
    fputs(", \"algbw_gbps\": ", f); json_num(f, ar_algbw_gbps(r->bytes, t));
    fputs(", \"busbw_gbps\": ", f); json_num(f, ar_busbw_coll_gbps(r->coll, r->bytes, t, r->nranks));
    if (res->checked) fprintf(f, ", \"wrong\": %" PRIu64, res->wrong);
    else fputs(", \"wrong\": null", f);
    fputs(", \"bound_us\": ", f); json_num(f, r->bound_s > 0 ? r->bound_s * 1e6 : NAN);
    fputs(", \"efficiency\": ", f); json_num(f, ar_row_efficiency(r));
    for (int k = 0; k < AR_NTERM; k++) {
        fprintf(f, ", \"%s\": ", term_keys[k]);
        json_num(f, res->terms_s[k] * 1e6);
    }
    fputs(", \"cycles\": ", f); json_num(f, res->cycles);
    fputs(", \"check\": ", f); json_str(f, r->check ? r->check : "");
    fputs(", \"sim_wall_s\": ", f); json_num(f, res->sim_wall_s);
    if (r->links_detected && r->links_detected[0]) {
        fputs(", \"links_detected\": ", f);
        json_str(f, r->links_detected);
    }
    if (res->links && res->nlinks > 0) {
        fputs(", \"links\": [", f);
        for (int i = 0; i < res->nlinks; i++) {
            const ar_link_stat_t *l = &res->links[i];
            fprintf(f, "%s{\"link\": %d, \"dir\": %d, \"bytes\": ", i ? ", " : "", l->link, l->dir);
            json_num(f, l->bytes);
            fputs(", \"busy_s\": ", f); json_num(f, l->busy_s);
            fputs(", \"util\": ", f); json_num(f, l->util);
            fputc('}', f);
        }
        fputc(']', f);
    }
    fputc('}', f);
}

void ar_cli_breakdown(FILE *f, const ar_topo_t *t, const ar_result_t *res) {
    double clock_hz = t && t->model ? t->model->clock_ghz * 1e9 : 0;
    double total = 0;
    for (int k = 0; k < AR_NTERM; k++) total += res->terms_s[k];
    fprintf(f, "#   critical path by term:  %8s %12s %12s %7s\n", "term", "time(us)", "cycles", "%");
    for (int k = 0; k < AR_NTERM; k++)
        fprintf(f, "#                           %8s %12.3f %12.0f %7.1f\n", ar_term_name((ar_term_t)k),
                res->terms_s[k] * 1e6, res->terms_s[k] * clock_hz,
                total > 0 ? 100.0 * res->terms_s[k] / total : 0.0);
    fprintf(f, "#                           %8s %12.3f %12.0f %7.1f\n", "total", total * 1e6,
            res->cycles > 0 ? res->cycles : total * clock_hz, total > 0 ? 100.0 : 0.0);
    if (!res->links || res->nlinks == 0) {
        fprintf(f, "#   per-link traffic: none (no data crossed a link)\n");
        return;
    }
    fprintf(f, "#   per-link traffic: %5s %-24s %-12s %10s %12s %7s\n", "link", "direction", "kind",
            "bytes", "busy(us)", "util%");
    for (int i = 0; i < res->nlinks; i++) {
        const ar_link_stat_t *l = &res->links[i];
        char dir[160] = "?", kind[96] = "?";
        if (t && l->link >= 0 && l->link < t->nlinks) {
            const ar_link_t *k = &t->links[l->link];
            int from = l->dir >= 0 ? k->a : k->b, to = l->dir >= 0 ? k->b : k->a;
            snprintf(dir, sizeof dir, "%s->%s", t->nodes[from].name, t->nodes[to].name);
            if (t->model && k->kind >= 0 && k->kind < t->model->nlinks)
                snprintf(kind, sizeof kind, "%s x%d", t->model->links[k->kind].name, k->count);
        }
        char bytes[32];
        fprintf(f, "#                     %5d %-24s %-12s %10s %12.3f %7.1f\n", l->link, dir, kind,
                ar_bytes_human(l->bytes, bytes, sizeof bytes), l->busy_s * 1e6, l->util * 100.0);
    }
}
