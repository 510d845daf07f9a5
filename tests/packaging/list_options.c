/* list_options: prints an option table, one option a line, so check_man.sh can require each
 * option in the manual pages and the --help output.
 *   list_options          bloatmeterd's table: NAME (required in bloatmeterd(8) and
 *                         bloatmeterd.conf(5))
 *   list_options client   bloatmeter's table: NAME SHORT ARG, "-" for no short flag or no
 *                         value (required in bloatmeter(1) and `bloatmeter --help`) */
#include <stdio.h>
#include <string.h>

#include "client/options.h"
#include "server/srvconfig.h"

int main(int argc, char **argv)
{
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "client") != 0)) {
		fprintf(stderr, "usage: list_options [client]\n");
		return 2;
	}
	for (int i = 0; argc == 1 && i < SRVOPT_COUNT; i++)
		if (printf("%s\n", srvconfig_option_name(i)) < 0)
			return 1;
	for (int i = 0; argc == 2 && i < CLIOPT_COUNT; i++) {
		const struct client_option *o = options_get(i);
		char s[2] = { o->short_flag ? o->short_flag : '-', '\0' };

		/* An optional value as it is written: "[=FILE]". */
		if (printf("%s %s %s%s%s\n", o->name, s, o->arg && options_arg_optional(o) ? "[=" : "",
			   o->arg ? o->arg : "-", o->arg && options_arg_optional(o) ? "]" : "") < 0)
			return 1;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
