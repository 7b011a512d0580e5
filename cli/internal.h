/* cli: the arsim command. main.c dispatches each subcommand to one function,
 * each in its own file. Every function returns the process exit status:
 * 0 ok, 1 a check failed, 2 bad input or usage (one line on stderr: what and where). */
#ifndef ARSIM_CLI_INTERNAL_H
#define ARSIM_CLI_INTERNAL_H

int ar_cli_run(int argc, char **argv);       /* cli/run.c; also the default study */
int ar_cli_study(int argc, char **argv);     /* cli/run.c: arsim with no arguments */
int ar_cli_list(int argc, char **argv);      /* cli/list.c */
int ar_cli_topo(int argc, char **argv);      /* cli/topo.c */
int ar_cli_sweep(int argc, char **argv);     /* cli/sweep.c */
int ar_cli_merge(int argc, char **argv);     /* cli/sweep.c */
int ar_cli_bench(int argc, char **argv);     /* cli/bench.c */
int ar_cli_calibrate(int argc, char **argv); /* cli/calibrate.c */
int ar_cli_validate(int argc, char **argv);  /* cli/validate.c */
int ar_cli_model(int argc, char **argv);     /* cli/model.c */
int ar_cli_plot(int argc, char **argv);      /* cli/plot.c */
int ar_cli_bound(int argc, char **argv);     /* cli/bound.c */

#endif
