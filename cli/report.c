/* cli: the shared output of run, sweep and bench: the nccl-tests-shaped table, JSON
 * rows (the CSV's columns; the CSV itself is arsim/csv.h's), and --breakdown. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli/opts.h"

void ar_cli_table_header(FILE *f, int with_check) {
    fprintf(f, "#%11s %13s %6s %12s %12s %12s %12s%s\n", "size", "count", "type", "algo",
            "time(us)", "algbw(GB/s)", "busbw(GB/s)", with_check ? "  check" : "");
}

void ar_cli_table_row(FILE *f, const ar_row_t *r, int with_check) {
    double t = r->res->time_s;
    fprintf(f, "%12" PRIu64 " %13" PRIu64 " %6s %12s %12.2f %12.2f %12.2f", r->bytes, r->count,
            ar_dtype_name(r->dtype), r->algo, t * 1e6, ar_algbw_gbps(r->bytes, t),
            ar_busbw_gbps(r->bytes, t, r->nranks));
    if (with_check) fprintf(f, "  %5s", r->check && *r->check ? r->check : "-");
    fputc('\n', f);
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
                                                    "sync_us", "launch_us"};
    fputs(first ? "  {" : ",\n  {", f);
    fputs("\"backend\": ", f); json_str(f, r->backend);
    fputs(", \"topology\": ", f); json_str(f, r->topology);
    fputs(", \"model\": ", f); json_str(f, r->model);
    fprintf(f, ", \"nranks\": %d, \"algo\": ", r->nranks); json_str(f, r->algo);
    fprintf(f, ", \"dtype\": \"%s\", \"buffer\": \"%s\", \"bytes\": %" PRIu64 ", \"count\": %" PRIu64
               ", \"channels\": %d, \"chunk_bytes\": %" PRIu64,
            ar_dtype_name(r->dtype), ar_mem_name(r->buffer), r->bytes, r->count, r->channels,
            r->chunk_bytes);
    fputs(", \"time_us\": ", f); json_num(f, t * 1e6);
    fputs(", \"algbw_gbps\": ", f); json_num(f, ar_algbw_gbps(r->bytes, t));
    fputs(", \"busbw_gbps\": ", f); json_num(f, ar_busbw_gbps(r->bytes, t, r->nranks));
    for (int k = 0; k < AR_NTERM; k++) {
        fprintf(f, ", \"%s\": ", term_keys[k]);
        json_num(f, res->terms_s[k] * 1e6);
    }
    fputs(", \"cycles\": ", f); json_num(f, res->cycles);
    fputs(", \"check\": ", f); json_str(f, r->check ? r->check : "");
    fputs(", \"sim_wall_s\": ", f); json_num(f, res->sim_wall_s);
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
    fprintf(f, "#   per-link traffic: %5s %-24s %-12s %14s %12s %7s\n", "link", "direction", "kind",
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
        fprintf(f, "#                     %5d %-24s %-12s %14.0f %12.3f %7.1f\n", l->link, dir, kind,
                l->bytes, l->busy_s * 1e6, l->util * 100.0);
    }
}
