/* cmd_util.h: small helpers shared by the bench, zoo, explain and model (predict, compare, train,
 * transfer, inspector) commands and the explorer's importance pane (open to the other commands):
 * a JSON string or number written to a stream, a monotonic clock in milliseconds, an ascending
 * comparison of doubles for qsort, the seeded synthetic grouped graph that the benchmarks time
 * when no graph is given, and the --exported-batch option that every command reading a graph
 * file takes. */
#ifndef DRIPLE_CMD_UTIL_H
#define DRIPLE_CMD_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "dp/graph_io.h"
#include "dp/grouped.h"

/* Writes s (NULL: "") as a JSON string literal: quote, backslash and control characters escaped. */
void cmd_json_str(FILE *f, const char *s);
/* Writes v with 9 significant digits, or null when it is NaN or infinite (JSON has neither). */
void cmd_json_num(FILE *f, double v);
/* CLOCK_MONOTONIC in milliseconds, for timing. */
double cmd_now_ms(void);
/* qsort comparison: doubles in ascending order. */
int cmd_cmp_double(const void *a, const void *b);
/* A seeded random connected grouped graph of n >= 1 groups (a random spanning tree plus about
 * 1.8 n chords, de-duplicated) with features in the ranges Driple's grouped graphs show (tensor
 * size 0..1e7, 1..50 ops, op weight 0..3). The same seed gives the same graph. New graph owned
 * by the caller (dp_grouped_free); NULL when out of memory. */
struct dp_grouped *cmd_synthetic_grouped(int n, uint64_t seed);
/* Reads `--exported-batch N` (the batch size the graph was exported with, 1..2^40) into *o, which
 * it first resets (exported_batch 0 = detect from the graph). Query it with the other options,
 * before any positional. False, with c->bad set and the message naming the option printed, when
 * the value is malformed or out of range; true when absent or valid. */
bool cmd_import_opts(struct cli *c, struct dp_import_opts *o);

#endif
