/* arsim: the command. Dispatches each subcommand to its function (cli/internal.h);
 * with no subcommand it runs the default study. Exit status: 0 ok, 1 a check
 * failed, 2 bad input or usage (one line on stderr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "cli/internal.h"
#include "cli/opts.h"
#include "arsim/util.h"

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *what;
} commands[] = {
    {"run", ar_cli_run, "run algorithms on a backend, print the table (--csv, --json, --breakdown)"},
    {"sweep", ar_cli_sweep, "run the cross product of the selectors into a CSV (--jobs, --shard, --resume)"},
    {"merge", ar_cli_merge, "merge sweep CSV files: arsim merge A.csv B.csv -o OUT.csv"},
    {"bench", ar_cli_bench, "measure on the GPUs side by side with NCCL (--backend cuda)"},
    {"calibrate", ar_cli_calibrate, "fit a hardware model from micro-benchmarks: -o MODEL.yaml"},
    {"validate", ar_cli_validate, "model against measured data and reference files"},
    {"topo", ar_cli_topo, "topo show|check FILE|SPEC: summary, or validate a file"},
    {"list", ar_cli_list, "list algos|probes|topologies|models|backends"},
    {"model", ar_cli_model, "model keys|show NAME: every key of a hardware model, or a model's values"},
    {"bound", ar_cli_bound, "the physical bound of an allreduce on a topology, term by term, per size"},
    {"plot", ar_cli_plot, "a figure from any arsim CSV: arsim plot FILE.csv [-o FILE.png] [--y busbw|time|...]"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
    fprintf(f,
        "arsim %s: a cycle-approximate simulator of allreduce across many accelerators,\n"
        "whose algorithms also run unchanged on NVIDIA GPUs.\n\n"
        "usage: arsim [options]               the default study: every algorithm that fits "
        AR_CLI_DEFAULT_TOPOLOGY ",\n"
        "                                     8K..1G, sim backend (analytic when built without SimGrid)\n"
        "       arsim COMMAND [options]\n\n"
        "commands:\n", PACKAGE_VERSION);
    for (size_t i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].what);
    fprintf(f, "\noptions of run and the default study (arsim COMMAND --help: a command's own):\n");
    ar_cli_opts_usage(f, AR_CLI_ALL_OPTS);
    fprintf(f,
        "\nexamples:\n"
        "  arsim run --topology torus_2d:4x4 --algo ring,torus2d --size 8K:128M\n"
        "  arsim run --backend ref --topology ring_1d:5 --algo all --count 1001 --check\n"
        "  arsim run --backend analytic --topology h200_pair --size 1G --breakdown\n"
        "  arsim topo show hgx_h100_8\n\n"
        "every command also takes --data-dir DIR: the shipped topologies, models and reference\n"
        "files from DIR (as ARSIM_DATADIR=DIR does); default the installed ones, or the source\n"
        "tree's for an arsim run from its build tree\n\n"
        "exit status: 0 ok, 1 a check failed, 2 bad input or usage\n");
}

/* Takes --data-dir DIR (or --data-dir=DIR) out of argv, wherever it stands, and makes DIR
 * the data directory of the whole process through ARSIM_DATADIR, the one place every
 * command looks. Returns the new argc, or -1 after a one-line error. */
static int take_data_dir(int argc, char **argv) {
    int n = 0;
    for (int i = 0; i < argc; i++) {
        const char *dir = NULL;
        if (strcmp(argv[i], "--data-dir") == 0) {
            if (i + 1 >= argc) return ar_cli_fail("", "--data-dir: needs a directory"), -1;
            dir = argv[++i];
        } else if (strncmp(argv[i], "--data-dir=", 11) == 0) {
            dir = argv[i] + 11;
        } else {
            argv[n++] = argv[i];
            continue;
        }
        if (!ar_is_dir(dir))
            return ar_cli_fail("", "--data-dir '%s': not a directory", dir), -1;
        setenv("ARSIM_DATADIR", dir, 1);
    }
    argv[n] = NULL;
    return n;
}

int main(int argc, char **argv) {
    /* Unbuffered-enough output for pipes: rows are flushed by the commands themselves. */
    if ((argc = take_data_dir(argc, argv)) < 0) return 2;
    if (argc < 2) return ar_cli_study(1, argv);
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            for (size_t i = 0; i < NCOMMANDS; i++)
                if (strcmp(argv[2], commands[i].name) == 0) {
                    char help[] = "--help";
                    char *av[] = {argv[2], help, NULL};
                    return commands[i].fn(2, av);
                }
            return ar_cli_fail("help", "'%s': unknown command", argv[2]);
        }
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("arsim %s\n", PACKAGE_VERSION);
        return 0;
    }
    /* arsim --backend analytic ...: the default study with options. */
    if (cmd[0] == '-') return ar_cli_study(argc, argv);
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0) return commands[i].fn(argc - 1, argv + 1);
    return ar_cli_fail("", "'%s': unknown command (see arsim --help)", cmd);
}
