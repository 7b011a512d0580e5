/* arsim sweep / merge. */
#include <stdio.h>
#include "cli/internal.h"
int ar_cli_sweep(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "arsim sweep: not available in this build\n"); return 2; }
int ar_cli_merge(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "arsim merge: not available in this build\n"); return 2; }
