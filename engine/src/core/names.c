/* names.c: comma-separated name lists (dp/names.h). */
#include "dp/names.h"

#include <string.h>
#include <strings.h>

bool dp_name_in_list(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !strncasecmp(p, name, n)) return true;
        p += len;
        if (*p == ',') p++;
    }
    return false;
}
