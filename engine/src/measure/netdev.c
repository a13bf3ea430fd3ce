/* netdev.c: network byte counters from /proc/net/dev (or a file in its format, for tests): two
 * header lines, then one line per interface, "name: rx_bytes rx_packets ... (8 receive fields)
 * tx_bytes tx_packets ... (8 transmit fields)". */
#include "dp/record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/files.h"

const char *dp_netdev_path(const char *path) {
    if (path && *path) return path;
    const char *env = getenv(DP_NETDEV_ENV);
    return env && *env ? env : DP_NETDEV_DEFAULT;
}

/* Parses one interface line. Returns false on a malformed line; name gets the interface. */
static bool parse_line(char *line, char *name, size_t cap, struct dp_net_counters *c) {
    char *colon = strchr(line, ':');
    if (!colon) return false;
    char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    size_t len = (size_t)(colon - s);
    if (len == 0 || len >= cap) return false;
    memcpy(name, s, len);
    name[len] = '\0';
    uint64_t f[16];
    char *p = colon + 1;
    for (int i = 0; i < 16; i++) {
        char *end;
        errno = 0;
        while (*p == ' ' || *p == '\t') p++;
        if (*p < '0' || *p > '9') return false;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno || end == p) return false;
        f[i] = (uint64_t)v;
        p = end;
    }
    c->rx_bytes = f[0];
    c->tx_bytes = f[8];
    return true;
}

#define NETDEV_MAX_BYTES ((size_t)1 << 20)

/* Calls visit for each interface line; stops early when visit returns false. */
static enum dp_status scan(const char *path, bool (*visit)(void *, const char *,
                                                           const struct dp_net_counters *),
                           void *ud, struct dp_error *err) {
    static const struct dp_read_spec spec = {"/proc/net/dev listing", NETDEV_MAX_BYTES, true, NULL,
                                             NULL};
    char *text = NULL;
    size_t len = 0;
    enum dp_status st = dp_file_read(path, &spec, &text, &len, err);
    if (st) return st;
    const char *name = dp_file_name(path);
    int lineno = 0;
    for (char *line = text; line < text + len;) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        if (nl) *nl = '\0';
        char *next = nl ? nl + 1 : text + len;
        lineno++;
        if (lineno > 2) { /* after the two header lines */
            char iface[DP_IFACE_MAX];
            struct dp_net_counters c;
            if (!parse_line(line, iface, sizeof iface, &c)) {
                st = dp_error_set(err, DP_ERR_PARSE,
                                  "%s:%d: expected 'IFACE: rx_bytes ... (16 counters)'", name,
                                  lineno);
                break;
            }
            if (!visit(ud, iface, &c)) break;
        }
        line = next;
    }
    if (st == DP_OK && lineno < 2)
        st = dp_error_set(err, DP_ERR_PARSE, "%s:%d: missing the two header lines of "
                          "/proc/net/dev", name, lineno + 1);
    free(text);
    return st;
}

struct find_ctx {
    const char            *want;
    bool                   found;
    struct dp_net_counters c;
    char                   names[256]; /* the interfaces seen, for the error message */
};

static bool visit_find(void *ud, const char *name, const struct dp_net_counters *c) {
    struct find_ctx *x = ud;
    if (!strcmp(name, x->want)) {
        x->found = true;
        x->c = *c;
        return false;
    }
    size_t used = strlen(x->names);
    if (used + strlen(name) + 3 < sizeof x->names)
        snprintf(x->names + used, sizeof x->names - used, "%s%s", used ? ", " : "", name);
    return true;
}

enum dp_status dp_netdev_read(const char *path, const char *iface, struct dp_net_counters *out,
                              struct dp_error *err) {
    path = dp_netdev_path(path);
    struct find_ctx x = {.want = iface};
    enum dp_status st = scan(path, visit_find, &x, err);
    if (st != DP_OK) return st;
    if (!x.found)
        return dp_error_set(err, DP_ERR_NOT_FOUND, "%s: no network interface '%s' (present: %s)",
                            path, iface, x.names[0] ? x.names : "none");
    *out = x.c;
    return DP_OK;
}

struct busiest_ctx {
    char     name[DP_IFACE_MAX];
    uint64_t bytes;
    bool     found;
};

static bool visit_busiest(void *ud, const char *name, const struct dp_net_counters *c) {
    struct busiest_ctx *x = ud;
    if (!strcmp(name, "lo")) return true;
    uint64_t b = c->rx_bytes + c->tx_bytes;
    if (!x->found || b > x->bytes) {
        x->found = true;
        x->bytes = b;
        snprintf(x->name, sizeof x->name, "%s", name);
    }
    return true;
}

enum dp_status dp_netdev_busiest(const char *path, char *name, size_t cap, struct dp_error *err) {
    path = dp_netdev_path(path);
    struct busiest_ctx x = {.found = false};
    enum dp_status st = scan(path, visit_busiest, &x, err);
    if (st != DP_OK) return st;
    if (!x.found)
        return dp_error_set(err, DP_ERR_NOT_FOUND,
                            "%s: no network interface but the loopback; name one with --iface",
                            path);
    if (strlen(x.name) >= cap)
        return dp_error_set(err, DP_ERR_INVALID, "%s: interface name '%s' too long", path, x.name);
    snprintf(name, cap, "%s", x.name);
    return DP_OK;
}
