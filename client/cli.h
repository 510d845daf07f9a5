/* cli: bloatmeter's command line — the measurement command and the `lab` subcommand. */
#ifndef BM_CLI_H
#define BM_CLI_H

/* Returns the process exit code: 0 success, 1 runtime error, 2 bad usage. */
int cli_main(int argc, char **argv);

#endif
