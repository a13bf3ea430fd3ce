/* clock.h: the one monotonic clock every layer times with (training, recording, benchmarks, the
 * explorer's background jobs). */
#ifndef DP_CLOCK_H
#define DP_CLOCK_H

/* Milliseconds on CLOCK_MONOTONIC since an arbitrary start; only differences mean anything.
 * Never fails. */
double dp_clock_ms(void);

#endif
