/* fuzz: the command-line parser (cli/opts.c, ar_cli_opts_parse), and what the
 * subcommands do first with its result (sizes in bytes, topology SPECs).
 *
 * Input: newline-separated words. The first picks the subcommand ("sweep"
 * parses lists everywhere; anything else parses as "run"); the rest are
 * argv[1..]. The parser writes its one-line errors to stderr and --help to
 * stdout: both are captured per input and checked against the CLI contract
 * (bad input: status 2 and exactly one line "arsim CMD: ..."). */
#include <stdio.h>
#include "fuzz/fuzz.h"
#include "cli/opts.h"

enum { MAX_ARGS = 256 };

/* Topology SPECs are opened (SPEC parsing, builders, --ranks); files are not, so
 * an input never makes the fuzzer read a device or a FIFO. Specs with a number
 * over 64 are left out: building and routing a large grid takes milliseconds to
 * a second, which would cut the executions per second a hundredfold, and the
 * size limits are tested directly (fuzz/check_limits.c). */
static int is_builder_spec(const char *s) {
    if (!strchr(s, ':') || strchr(s, '/') || strchr(s, '.')) return 0;
    for (const char *p = s; *p;) {
        if (*p >= '0' && *p <= '9') {
            unsigned long v = 0;
            while (*p >= '0' && *p <= '9') {
                if (v <= 64) v = v * 10 + (unsigned long)(*p - '0');
                p++;
            }
            if (v > 64) return 0;
        } else {
            p++;
        }
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = fuzz_cstr(data, size);
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    for (char *p = text; argc < MAX_ARGS;) {
        argv[argc++] = p;
        char *nl = memchr(p, '\n', (size_t)(text + size - p));
        if (!nl) break;
        *nl = '\0';
        p = nl + 1;
    }
    argv[argc] = NULL;
    const char *cmd = strcmp(argv[0], "sweep") == 0 ? "sweep" : "run";
    unsigned flags = strcmp(cmd, "sweep") == 0 ? AR_CLI_LISTS : 0;

    char *outbuf = NULL, *errbuf = NULL;
    size_t outlen = 0, errlen = 0;
    FILE *saved_out = stdout, *saved_err = stderr;
    FILE *fout = open_memstream(&outbuf, &outlen);
    FILE *ferr = open_memstream(&errbuf, &errlen);
    if (!fout || !ferr) abort();
    stdout = fout;
    stderr = ferr;

    ar_cli_opts_t o;
    int rc = ar_cli_opts_parse(cmd, argc, argv, flags, NULL, &o);
    int topo_rc = -1;
    if (rc == AR_CLI_OK) {
        /* Every list the subcommands loop over is within its array and non-empty. */
        FUZZ_ASSERT(o.nbackends >= 1 && o.nbackends <= AR_CLI_MAX_LIST);
        FUZZ_ASSERT(o.ntopos >= 1 && o.ntopos <= AR_CLI_MAX_LIST);
        FUZZ_ASSERT(o.nalgos >= 1 && o.nalgos <= AR_CLI_MAX_LIST);
        FUZZ_ASSERT(o.ndtypes >= 1 && o.ndtypes <= AR_NDTYPE);
        FUZZ_ASSERT(o.nbuffers >= 1 && o.nbuffers <= AR_NMEM);
        FUZZ_ASSERT(o.nchannels >= 1 && o.nchannels <= AR_CLI_MAX_LIST);
        FUZZ_ASSERT(o.nchunks >= 1 && o.nchunks <= AR_CLI_MAX_LIST);
        FUZZ_ASSERT(o.nsizes <= AR_CLI_MAX_SIZES && o.ncounts <= AR_CLI_MAX_SIZES);
        FUZZ_ASSERT(ar_cli_nsizes(&o) >= 1);
        for (int b = 0; b < o.nbackends; b++) FUZZ_ASSERT(o.backends[b] && o.backends[b][0]);
        for (int a = 0; a < o.nalgos; a++) FUZZ_ASSERT(o.algos[a] != NULL);
        /* Byte counts never wrap: bytes is count whole elements, count >= 1. */
        for (int i = 0; i < ar_cli_nsizes(&o); i++)
            for (int d = 0; d < o.ndtypes; d++) {
                uint64_t bytes = 0, count = 0;
                size_t es = ar_dtype_size(o.dtypes[d]);
                ar_cli_size_at(&o, i, o.dtypes[d], &bytes, &count);
                FUZZ_ASSERT(count >= 1 && bytes >= count && bytes / es == count && bytes % es == 0);
            }
        fflush(ferr);
        FUZZ_ASSERT(errlen == 0);
        for (int t = 0; t < o.ntopos; t++) {
            if (!is_builder_spec(o.topos[t])) continue;
            ar_topo_t *topo = NULL;
            topo_rc = ar_cli_topo_open(&o, o.topos[t], &topo);
            if (topo_rc == AR_CLI_OK) {
                FUZZ_ASSERT(topo != NULL && topo->nranks >= 1);
                FUZZ_ASSERT(o.ranks == 0 || topo->nranks == o.ranks);
                ar_topo_free(topo);
            } else {
                FUZZ_ASSERT(topo_rc == 2 && topo == NULL);
            }
            break; /* one per input keeps executions fast */
        }
    }
    ar_cli_opts_free(&o);

    stdout = saved_out;
    stderr = saved_err;
    fclose(fout);
    fclose(ferr);
    if (rc == AR_CLI_HELP) {
        FUZZ_ASSERT(outlen > 0);
    } else if (rc == 2 || topo_rc == 2) {
        /* One line on stderr: "arsim CMD: what and where". */
        FUZZ_ASSERT(errlen > 0 && errbuf[errlen - 1] == '\n');
        FUZZ_ASSERT(memchr(errbuf, '\n', errlen) == errbuf + errlen - 1);
        FUZZ_ASSERT(strncmp(errbuf, "arsim ", 6) == 0);
    } else {
        FUZZ_ASSERT(rc == AR_CLI_OK);
    }
    free(outbuf);
    free(errbuf);
    free(text);
    return 0;
}
