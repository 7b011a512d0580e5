/* arsim calibrate / validate. */
#include <stdio.h>
#include "cli/internal.h"
int ar_cli_calibrate(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "arsim calibrate: not available in this build\n"); return 2; }
int ar_cli_validate(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "arsim validate: not available in this build\n"); return 2; }
