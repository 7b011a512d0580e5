/* fuzz: replay driver. Feeds every file of a corpus to LLVMFuzzerTestOneInput,
 * so `make check` re-runs everything the fuzzers ever kept without libFuzzer.
 * With no arguments it reads FUZZ_CORPUS (the committed, minimised corpus of
 * this target) and FUZZ_REGRESS (hand-written inputs for bugs found and limits
 * set, never minimised away); otherwise each argument is a file or a
 * directory. Exit 0 when every input ran, 99 (a hard error to the test driver)
 * when the corpus is missing or empty. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz/fuzz.h"

static int replay_file(const char *path, int verbose) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) abort();
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf) abort();
        }
    }
    fclose(f);
    if (verbose) fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    /* Hand over an exact-size copy so an over-read past the input is caught
     * by the sanitizers the way libFuzzer's own copy would catch it. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) abort();
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files of a directory in name order (replays are reproducible). */
static int replay_path(const char *path, int verbose, int *nfiles) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (replay_file(path, verbose) != 0) return -1;
        (*nfiles)++;
        return 0;
    }
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = realloc(names, cap * sizeof *names);
            if (!names) abort();
        }
        size_t l = strlen(path) + strlen(e->d_name) + 2;
        names[n] = malloc(l);
        if (!names[n]) abort();
        snprintf(names[n], l, "%s/%s", path, e->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat fs;
        if (rc == 0 && stat(names[i], &fs) == 0 && S_ISREG(fs.st_mode)) {
            if (replay_file(names[i], verbose) != 0) rc = -1;
            else (*nfiles)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv) {
    int verbose = getenv("FUZZ_REPLAY_VERBOSE") != NULL;
    int nfiles = 0, rc = 0;
    if (argc < 2) {
        rc = replay_path(FUZZ_CORPUS, verbose, &nfiles);
#ifdef FUZZ_REGRESS
        if (rc == 0) rc = replay_path(FUZZ_REGRESS, verbose, &nfiles);
#endif
    } else {
        for (int i = 1; i < argc && rc == 0; i++) rc = replay_path(argv[i], verbose, &nfiles);
    }
    if (rc != 0) return 99;
    if (nfiles == 0) {
        fprintf(stderr, "replay: no corpus files found\n");
        return 99;
    }
    printf("%s: %d inputs replayed\n", argv[0], nfiles);
    return 0;
}
