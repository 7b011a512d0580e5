/* arsim plot FILE.csv [-o FILE.png]: a figure from any CSV arsim writes, drawn by
 * plots/arsim_plot.py (matplotlib) from the data directory; this command finds it and
 * hands it the arguments. ARSIM_PYTHON names the interpreter (default: the python3 with
 * matplotlib that configure found). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "config.h"
#include "cli/internal.h"
#include "cli/opts.h"
#include "arsim/util.h"

int ar_cli_plot(int argc, char **argv) {
    /* A program, not data: a --data-dir of one's own topologies need not hold it. */
    char script[1100];
    const char *const where[] = {NULL, ARSIM_PKGDATADIR, ARSIM_SRCDIR};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        if (where[i]) snprintf(script, sizeof script, "%s/plots/arsim_plot.py", where[i]);
        else ar_data_path("plots/arsim_plot.py", script, sizeof script);
        if (access(script, R_OK) == 0) break;
        if (i + 1 == sizeof where / sizeof where[0])
            return ar_cli_fail("plot", "cannot find plots/arsim_plot.py (in the data directory, %s or %s)",
                               ARSIM_PKGDATADIR, ARSIM_SRCDIR);
    }
    const char *py = getenv("ARSIM_PYTHON");
    if (!py || !*py) py = ARSIM_PYTHON_PLOT; /* configure's: a python3 that has matplotlib */
    char **av = calloc((size_t)argc + 2, sizeof *av);
    if (!av) return ar_cli_fail("plot", "out of memory");
    av[0] = (char *)py;
    av[1] = script;
    for (int i = 1; i < argc; i++) av[i + 1] = argv[i];
    fflush(stdout);
    execvp(py, av);
    const int e = errno;
    free(av);
    return ar_cli_fail("plot", "cannot run %s: %s (Debian: apt-get install python3 python3-matplotlib)", py,
                       strerror(e));
}
