/* validate: how `arsim bench`'s rows are printed, as a table and as its CSV (built with
 * or without the cuda backend: validate/bench.c measures them). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include "arsim/csv.h"
#include "validate/bench.h"

/* nccl-tests' columns (size count type redop root, time algbw busbw #wrong), the plan's
 * algorithm, channels and chunk, and NCCL's time at the same size beside ours. */
void ar_bench_table_header(FILE *f) {
    fprintf(f, "#\n# %12s %12s %5s %5s %4s  %-22s %4s %8s %10s %10s %10s %6s  %10s %10s %8s\n", "size", "count",
            "type", "redop", "root", "algo", "chan", "chunk", "time(us)", "algbw", "busbw", "#wrong", "nccl(us)",
            "nccl_bus", "speedup");
}

void ar_bench_table_row(FILE *f, const ar_bench_row_t *r) {
    const double busbw = ar_busbw_coll_gbps(r->coll, r->bytes, r->time_s, r->nranks);
    char wr[16], chunk[24];
    snprintf(wr, sizeof wr, r->wrong < 0 ? "N/A" : "%d", r->wrong);
    ar_size_format(r->chunk_bytes, chunk, sizeof chunk);
    fprintf(f, "  %12" PRIu64 " %12" PRIu64 " %5s %5s %4d  %-22s %4d %8s %10.2f %10.2f %10.2f %6s", r->bytes,
            r->count, ar_dtype_name(r->dtype), r->coll == AR_COLL_ALLGATHER ? "none" : "sum", r->root, r->algo, r->channels, chunk, r->time_s * 1e6,
            ar_algbw_gbps(r->bytes, r->time_s), busbw, wr);
    if (!isnan(r->nccl_s))
        fprintf(f, "  %10.2f %10.2f %8.2f\n", r->nccl_s * 1e6, ar_busbw_coll_gbps(r->coll, r->bytes, r->nccl_s, r->nranks),
                r->nccl_s / r->time_s);
    else
        fprintf(f, "  %10s %10s %8s\n", "-", "-", "-");
}

void ar_bench_csv_header(FILE *f) {
    fprintf(f, "size_bytes,count,dtype,redop,root,algo,channels,chunk_bytes,nranks,ngpus,time_us,algbw_gbps,"
               "busbw_gbps,wrong,"
               "nccl_time_us,nccl_busbw_gbps,speedup_vs_nccl,device,links_detected,op,gemm\n");
}

/* Empty fields where nothing was measured (no check, no NCCL), as in the result rows. */
void ar_bench_csv_row(FILE *f, const ar_bench_row_t *r) {
    char wrong[16] = "", nt[32] = "", nb[32] = "", sp[32] = "";
    if (r->wrong >= 0) snprintf(wrong, sizeof wrong, "%d", r->wrong);
    if (!isnan(r->nccl_s)) {
        snprintf(nt, sizeof nt, "%.4f", r->nccl_s * 1e6);
        snprintf(nb, sizeof nb, "%.3f", ar_busbw_coll_gbps(r->coll, r->bytes, r->nccl_s, r->nranks));
        snprintf(sp, sizeof sp, "%.4f", r->nccl_s / r->time_s);
    }
    fprintf(f, "%" PRIu64 ",%" PRIu64 ",%s,%s,%d,", r->bytes, r->count, ar_dtype_name(r->dtype),
            r->coll == AR_COLL_ALLGATHER ? "none" : "sum", r->root);
    ar_csv_put(f, r->algo);
    fprintf(f, ",%d,%" PRIu64 ",%d,%d,%.4f,%.3f,%.3f,%s,%s,%s,%s,", r->channels, r->chunk_bytes, r->nranks, r->ngpus,
            r->time_s * 1e6, ar_algbw_gbps(r->bytes, r->time_s), ar_busbw_coll_gbps(r->coll, r->bytes, r->time_s, r->nranks), wrong,
            nt, nb, sp);
    ar_csv_put(f, r->device);
    fputc(',', f);
    ar_csv_put(f, r->links_detected);
    fprintf(f, ",%s,", ar_coll_name(r->coll));
    if (r->gemm.m)
        fprintf(f, "%" PRIu64 "x%" PRIu64 "x%" PRIu64 "/%d", r->gemm.m, r->gemm.n, r->gemm.k, r->partitions);
    fputc('\n', f);
}

