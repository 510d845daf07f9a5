/* webpage: lookup in the embedded page table (see server/webpage.h). */
#include "server/webpage.h"

#include <string.h>

const struct http_asset *webpage_find(const char *name)
{
	for (size_t i = 0; i < web_nassets; i++)
		if (strcmp(web_assets[i].name, name) == 0)
			return &web_assets[i];
	return NULL;
}

size_t webpage_count(void)
{
	return web_nassets;
}
