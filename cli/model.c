/* arsim model keys [--markdown] | show NAME|FILE: the hardware model's keys (from the
 * one table, arsim/model_keys.h) and a model's values. */
#include <stdio.h>
#include <string.h>
#include "cli/internal.h"
#include "cli/opts.h"

static const char *section_name(ar_model_sect_t s) {
    return s == AR_MK_ROOT ? "" : s == AR_MK_LEVEL ? "memory.LEVEL." : "links[].";
}

static void range(const ar_model_key_t *k, char *buf, size_t len) {
    snprintf(buf, len, "%g .. %g%s", k->min, k->max, k->required ? "" : ", or 0");
}

static int keys(int markdown) {
    int n;
    const ar_model_key_t *k = ar_model_keys(&n);
    char r[64];
    if (markdown) {
        printf("| key | unit | | range | meaning |\n|---|---|---|---|---|\n");
        for (int i = 0; i < n; i++) {
            range(&k[i], r, sizeof r);
            printf("| `%s%s` | %s | %s | %s | %s |\n", section_name(k[i].section), k[i].name, k[i].unit,
                   k[i].required ? "required" : "optional", r, k[i].meaning);
        }
        return 0;
    }
    printf("%-34s %-6s %-9s %-22s %s\n", "# key", "unit", "", "range", "meaning");
    for (int i = 0; i < n; i++) {
        char name[80];
        snprintf(name, sizeof name, "%s%s", section_name(k[i].section), k[i].name);
        range(&k[i], r, sizeof r);
        printf("%-34s %-6s %-9s %-22s %s\n", name, k[i].unit, k[i].required ? "required" : "optional", r,
               k[i].meaning);
    }
    return 0;
}

/* One key's line: its path, value, unit and, in a calibrated model, measured or assumed. */
static int show_key(const ar_model_t *m, const ar_model_key_t *k, int l, void *ctx) {
    int n, *nassumed = ctx;
    char key[160];
    ar_model_key_path(m, k, l, key, sizeof key);
    const double v = ar_model_get(m, k, l);
    const int assumed = m->calib.gpus && (m->calib.assumed[k - ar_model_keys(&n)] >> l & 1);
    *nassumed += assumed;
    printf("%-34s %14.10g %-5s%s%s\n", key, v, k->unit, !m->calib.gpus ? "" : assumed ? " assumed " : " measured",
           !k->required && v == 0 ? "  (none: left out)" : "");
    return 0;
}

static int show(const char *name) {
    ar_model_t *m = NULL;
    ar_error_t err;
    ar_error_clear(&err);
    if (ar_model_load(name, &m, &err) != AR_OK) {
        char buf[512];
        return ar_cli_fail("model show", "%s", ar_error_format(&err, buf, sizeof buf));
    }
    const ar_model_calib_t *c = &m->calib;
    printf("# model %s (%s)\n", m->name, m->path);
    if (c->gpus)
        printf("# calibrated by arsim calibrate on %s (%d GPU%s), driver %s, CUDA runtime %s, %s:\n"
               "# every key measured there except those marked assumed%s\n",
               c->device, c->gpus, c->gpus == 1 ? "" : "s", c->driver, c->runtime, c->date,
               c->gpus == 1 ? " (one GPU: the link terms among them)" : "");
    else
        printf("# not calibrated: no benchmark run stands behind these values (the file's comments say where\n"
               "# each came from); arsim calibrate measures them on your GPUs\n");
    int nassumed = 0;
    ar_model_each_key(m, show_key, &nassumed);
    if (c->gpus) printf("# %d key%s assumed\n", nassumed, nassumed == 1 ? "" : "s");
    ar_model_free(m);
    return 0;
}

int ar_cli_model(int argc, char **argv) {
    const char *usage = "usage: arsim model keys [--markdown]   every key of a hardware model\n"
                        "       arsim model show NAME|FILE       a model's value of every key\n";
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc < 2) return ar_cli_fail("model", "what? (keys, show NAME|FILE)");
    if (!strcmp(argv[1], "keys")) {
        if (argc == 2) return keys(0);
        if (argc == 3 && !strcmp(argv[2], "--markdown")) return keys(1);
        return ar_cli_fail("model keys", "unexpected argument '%s'", argv[2]);
    }
    if (!strcmp(argv[1], "show")) {
        if (argc != 3) return ar_cli_fail("model show", "give one model: a shipped name or a .yaml file");
        return show(argv[2]);
    }
    return ar_cli_fail("model", "'%s': unknown (keys, show)", argv[1]);
}
