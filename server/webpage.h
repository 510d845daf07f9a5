/* webpage: the browser test page's files (web/page/, built by cmake/webpage.cmake and compiled
 * in by cmake/embed.cmake as web_assets[]), looked up by name for the public test listener
 * (server/webroute.c). The table is empty when the page was not built. */
#ifndef BM_WEBPAGE_H
#define BM_WEBPAGE_H

#include <stddef.h>

#include "server/http.h"

/* The generated table: constant data, hence globals (they are the program's text). */
extern const struct http_asset web_assets[];
extern const size_t web_nassets;

/* The file called name ("index.html"), or NULL. */
const struct http_asset *webpage_find(const char *name);
/* How many files the page has (0: it was not built). */
size_t webpage_count(void);

#endif
