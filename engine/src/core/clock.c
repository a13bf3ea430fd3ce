/* clock.c: the monotonic clock (dp/clock.h). */
#include "dp/clock.h"

#include <time.h>

double dp_clock_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
