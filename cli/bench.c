/* arsim bench. */
#include <stdio.h>
#include "cli/internal.h"
int ar_cli_bench(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "arsim bench: not available in this build\n"); return 2; }
