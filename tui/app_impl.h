/* app_impl.h: what the explorer's model files share among themselves (app.c: the what-if
 * setting and predictions; app_compare.c: the compare rows; app_ui.c: navigation; app_job.c:
 * the background transfer). Not for the views. */
#ifndef DRIPLE_APP_IMPL_H
#define DRIPLE_APP_IMPL_H

#include "app.h"

/* Copies src into dst (n bytes), truncating; NULL copies "". */
void app_copy(char *dst, size_t n, const char *src);
/* The what-if setting for s (its GPU's catalog index, its cluster); false when s's GPU is not
 * in the catalog (w untouched). */
bool app_what_of(const struct app *a, const struct dp_setting *s, struct app_what *w);
/* Makes w the what-if setting and repredicts; on an invalid one keeps the old and says why in
 * the status line. */
bool app_what_apply(struct app *a, const struct app_what *w);
/* app_predict for the n settings s into out[0..n-1], where defer_load (the UI building compare
 * rows) leaves a prediction whose inspector file is not loaded yet pending for an idle frame
 * (app_fill_pending). The rows the setting-aware inspector serves go through one batched pass
 * of its head (dp_session_predict_many); a row that fails says why in its note. */
void app_predict_settings(struct app *a, const struct dp_setting *s, int n, bool defer_load,
                          struct app_pred *out);
/* Stops a running transfer job and releases it (app_free). */
void app_job_stop(struct app *a);
/* Sorts the compare rows by the current key. */
void app_sort_rows(struct app *a);
/* Drops the rows out of GPU memory (simulated) while hide_oom is on; rows still waiting for
 * their simulation stay until it says. */
void app_compare_prune(struct app *a);

#endif
