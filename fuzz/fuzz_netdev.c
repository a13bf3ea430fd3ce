/* fuzz_netdev.c: libFuzzer target for the /proc/net/dev reader (dp_netdev_read for "eth0" and
 * dp_netdev_busiest). The reader takes a path, so each input goes through a per-process
 * temporary file. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "dp/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_netdev.%d.txt", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    struct dp_error err;
    struct dp_net_counters c;
    (void)dp_netdev_read(path, "eth0", &c, &err);
    char name[DP_IFACE_MAX];
    (void)dp_netdev_busiest(path, name, sizeof name, &err);
    return 0;
}
