/* list_options: prints the name of every option in bloatmeterd's option table, one a line,
 * so check_man.sh can require each in bloatmeterd(8) and bloatmeterd.conf(5). */
#include <stdio.h>

#include "server/srvconfig.h"

int main(void)
{
	for (int i = 0; i < SRVOPT_COUNT; i++)
		if (printf("%s\n", srvconfig_option_name(i)) < 0)
			return 1;
	return fflush(stdout) == 0 ? 0 : 1;
}
