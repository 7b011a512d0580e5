/* Small helpers (arsim/util.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arsim/error.h"
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include "arsim/util.h"

double ar_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ar_utc_date(char *buf, size_t len) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    if (!strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) && len) buf[0] = 0;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double ar_median(double *v, size_t n) {
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int ar_grow(void *arrayp, size_t *cap, size_t n, size_t elem) {
    if (n < *cap) return AR_OK;
    const size_t nc = *cap ? 2 * *cap : 16;
    void *p = realloc(*(void **)arrayp, nc * elem);
    if (!p) return AR_ENOMEM;
    *(void **)arrayp = p;
    *cap = nc;
    return AR_OK;
}

int ar_is_dir(const char *path) {
    struct stat st;
    return path[0] && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_dir_with_topologies(const char *dir) {
    char p[4200];
    snprintf(p, sizeof p, "%s/topologies", dir);
    return ar_is_dir(p);
}

/* An arsim running from the bindir it was configured for is the installed one: it reads
 * the installed data, even while the build tree it came from still exists. */
static int running_installed(void) {
    char exe[4096], bin[4096];
    if (!realpath("/proc/self/exe", exe) || !realpath(ARSIM_BINDIR, bin)) return 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return 0;
    *slash = '\0';
    return strcmp(exe, bin) == 0;
}

static const char *data_dir(void) {
    const char *env = getenv("ARSIM_DATADIR");
    if (env && env[0]) return env;
    /* Where this binary lies does not change while it runs: choose once. */
    static const char *chosen;
    if (!chosen) {
        const char *first = ARSIM_SRCDIR, *second = ARSIM_PKGDATADIR;
        if (running_installed()) first = ARSIM_PKGDATADIR, second = ARSIM_SRCDIR;
        chosen = is_dir_with_topologies(first) || !is_dir_with_topologies(second) ? first : second;
    }
    return chosen;
}

const char *ar_data_path(const char *sub, char *buf, size_t len) {
    snprintf(buf, len, "%s/%s", data_dir(), sub);
    return buf;
}

void ar_free_each(void *const *p, size_t n) {
    for (size_t i = 0; i < n; i++) free(p[i]);
}

void *ar_zeroed(size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) return NULL;
    const size_t bytes = n * size;
    if (bytes < AR_ZEROED_PAGES_MIN) return calloc(n ? n : 1, size ? size : 1);
    /* calloc would clear memory the heap reuses, page by page, every rank's part included */
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void ar_zeroed_free(void *p, size_t n, size_t size) {
    if (!p) return;
    if (n * size < AR_ZEROED_PAGES_MIN) free(p);
    else munmap(p, n * size);
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

const char *const *ar_data_names(const char *sub) {
    static struct { char sub[32]; char **names; } cache[4];
    static char *none[1] = {NULL};
    int slot = 0;
    for (; slot < 4 && cache[slot].names; slot++)
        if (strcmp(cache[slot].sub, sub) == 0) return (const char *const *)cache[slot].names;
    if (slot == 4) return (const char *const *)none;
    char dir[1024];
    DIR *d = opendir(ar_data_path(sub, dir, sizeof dir));
    if (!d) return (const char *const *)none;
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || e->d_name[0] == '.' || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
        if (ar_grow(&names, &cap, n + 1, sizeof *names) != AR_OK) break;
        if (!(names[n] = strndup(e->d_name, len - 5))) break;
        n++;
    }
    closedir(d);
    if (ar_grow(&names, &cap, n, sizeof *names) != AR_OK) { /* no room for the NULL: drop the last */
        if (!n) return (const char *const *)none;
        free(names[--n]);
    }
    names[n] = NULL;
    qsort(names, n, sizeof *names, cmp_name);
    snprintf(cache[slot].sub, sizeof cache[slot].sub, "%s", sub);
    cache[slot].names = names;
    return (const char *const *)names;
}

const char *ar_count_format(double n, char *buf, size_t len) {
    static const char unit[] = " kMG";
    int u = 0;
    while (n >= 1000 && u < 3) n /= 1000, u++;
    if (u == 0) snprintf(buf, len, "%.0f", n);
    else snprintf(buf, len, n < 100 ? "%.1f%c" : "%.0f%c", n, unit[u]);
    return buf;
}
