/* near.c: near-name detection for the catalogs' strict lookups (near.h). */
#include "cluster/near.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define NEAR_MAX_LEN 64

int dp_near_distance(const char *a, const char *b, int limit) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > NEAR_MAX_LEN || lb > NEAR_MAX_LEN) return limit + 1;
    if ((la > lb ? la - lb : lb - la) > (size_t)limit) return limit + 1;
    /* Optimal string alignment distance over three rows. */
    int rows[3][NEAR_MAX_LEN + 1];
    int *pp = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++) prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        int ca = tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= lb; j++) {
            int cb = tolower((unsigned char)b[j - 1]);
            int v = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < v) v = prev[j] + 1;
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            cur[j] = v;
        }
        int *t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb] > limit ? limit + 1 : prev[lb];
}

bool dp_near(const char *typed, const char *name) {
    size_t n = strlen(typed);
    if (n >= 2)
        for (const char *p = name; *p; p++)
            if (!strncasecmp(p, typed, n)) return true;
    int limit = strlen(name) <= 4 ? 1 : 2;
    return dp_near_distance(typed, name, limit) <= limit;
}

void dp_near_append(char *buf, size_t n, const char *name) {
    size_t len = strlen(buf);
    if (n < 4 || len + 4 >= n) return;
    int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", name);
    if (w < 0 || (size_t)w >= n - len) snprintf(buf + n - 4, 4, "...");
}
