/* shipped.c: the one search order for shipped files (dp/shipped.h). */
#include "dp/shipped.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_CANDIDATES 5

enum dp_status dp_shipped_path(const char *rel, const char *option, char *buf, size_t n,
                               struct dp_error *err) {
    static const char assets[] = "assets/";
    char cand[N_CANDIDATES][PATH_MAX + 64];
    int k = 0;
    const char *env = getenv("DRIPLE_ASSETS"), *home = getenv("DRIPLE_HOME");
    if (env && *env && !strncmp(rel, assets, sizeof assets - 1))
        snprintf(cand[k++], sizeof cand[0], "%.*s/%s", PATH_MAX, env, rel + sizeof assets - 1);
    if (home && *home) snprintf(cand[k++], sizeof cand[0], "%.*s/%s", PATH_MAX, home, rel);
    snprintf(cand[k++], sizeof cand[0], "%s", rel);
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        snprintf(cand[k++], sizeof cand[0], "%.*s/../%s", PATH_MAX, exe, rel);
        /* an installed tree: PREFIX/bin/driple, PREFIX/share/driple/assets (make install) */
        snprintf(cand[k++], sizeof cand[0], "%.*s/../share/driple/%s", PATH_MAX, exe, rel);
    }
    for (int i = 0; i < k; i++)
        if (access(cand[i], R_OK) == 0) {
            snprintf(buf, n, "%s", cand[i]);
            return DP_OK;
        }
    char tried[N_CANDIDATES * 300] = "";
    for (int i = 0, used = 0; i < k; i++) {
        int w = snprintf(tried + used, sizeof tried - (size_t)used, "%s%.290s", i ? ", " : "",
                         cand[i]);
        if (w < 0 || (size_t)w >= sizeof tried - (size_t)used) break;
        used += w;
    }
    snprintf(buf, n, "%s", rel);
    return dp_error_set(err, DP_ERR_NOT_FOUND, "%s: not found (tried %s; set DRIPLE_ASSETS or "
                        "DRIPLE_HOME%s%s)", rel, tried, option ? ", or pass " : "",
                        option ? option : "");
}
