/* app_job.c: the explorer's background transfer: a thread runs the session's transfer plan
 * (dp_transfer_run) while the UI shows its progress; app_tick takes the result into the session;
 * f saves it, the quit prompt saves every unsaved one. */
#include "app_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void job_set(double progress, const char *phase, void *ud) {
    struct app_job *j = ud;
    pthread_mutex_lock(&j->mu);
    j->progress = progress;
    app_copy(j->phase, sizeof j->phase, phase);
    pthread_mutex_unlock(&j->mu);
}

static void job_end(struct app_job *j, enum app_job_state st, struct dp_inspector *res,
                    const char *msg) {
    pthread_mutex_lock(&j->mu);
    j->state = st;
    j->result = res;
    j->progress = st == APP_JOB_DONE ? 1.0 : j->progress;
    app_copy(j->msg, sizeof j->msg, msg);
    snprintf(j->phase, sizeof j->phase, "%s",
             st == APP_JOB_DONE ? "done" : st == APP_JOB_CANCELLED ? "cancelled" : "failed");
    pthread_mutex_unlock(&j->mu);
}

/* The worker: the plan (a copy the UI leaves alone while it runs), then the message for the
 * status line. */
static void *xfer_main(void *arg) {
    struct app_job *j = arg;
    const struct dp_transfer_plan *p = &j->plan;
    struct dp_inspector *out = NULL;
    struct dp_transfer_report rep;
    struct dp_error err = {0};
    char msg[384];
    enum dp_status st = dp_transfer_run(p, &j->cancel, job_set, j, &out, &rep, &err);
    if (st == DP_OK)
        snprintf(msg, sizeof msg,
                 "transferred %s -> %s in %.1f s; f saves it (%d simulated samples; head only: %d "
                 "epochs, %.1f s, best val loss %.3g)", p->base_id, p->target.id, rep.total_s,
                 rep.n_samples, rep.epochs, rep.train_s, rep.best_val_loss);
    else if (st == DP_ERR_CANCELLED)
        snprintf(msg, sizeof msg, "transfer to %s cancelled", p->target.id);
    else
        snprintf(msg, sizeof msg, "transfer failed: %.200s", err.msg);
    job_end(j, st == DP_OK ? APP_JOB_DONE : st == DP_ERR_CANCELLED ? APP_JOB_CANCELLED
                                                                     : APP_JOB_FAILED,
            out, msg);
    return NULL;
}

bool app_transfer_start(struct app *a) {
    app_tick(a); /* a finished job's inspector is taken in before anything else */
    pthread_mutex_lock(&a->job.mu);
    enum app_job_state st = a->job.state;
    pthread_mutex_unlock(&a->job.mu);
    if (st == APP_JOB_RUNNING) {
        app_status(a, true, "a transfer is already running (x cancels it)");
        return false;
    }
    struct dp_transfer_plan plan;
    struct dp_error err = {0};
    if (dp_session_plan_transfer(a->ss, &a->cur, &plan, &err) != DP_OK) {
        app_status(a, true, "%s", err.msg);
        return false;
    }
    app_job_stop(a);
    a->job.plan = plan;
    a->job.cancel = 0;
    a->job.state = APP_JOB_RUNNING;
    a->job.progress = 0;
    app_copy(a->job.phase, sizeof a->job.phase, "starting");
    app_copy(a->job.target, sizeof a->job.target, a->cur.id);
    if (pthread_create(&a->job.thread, NULL, xfer_main, &a->job) != 0) {
        a->job.state = APP_JOB_FAILED;
        app_copy(a->job.phase, sizeof a->job.phase, "failed");
        app_status(a, true, "transfer: cannot start a thread");
        return false;
    }
    a->job.started = true;
    app_status(a, false, "transferring %s -> %s in the background (simulated data; x cancels)",
               plan.base_id, a->cur.id);
    return true;
}

void app_transfer_cancel(struct app *a) {
    pthread_mutex_lock(&a->job.mu);
    bool running = a->job.state == APP_JOB_RUNNING;
    pthread_mutex_unlock(&a->job.mu);
    if (!running) return;
    a->job.cancel = 1;
    app_status(a, false, "cancelling the transfer");
}

void app_job_stop(struct app *a) {
    if (a->job.started) {
        a->job.cancel = 1;
        pthread_join(a->job.thread, NULL);
    }
    a->job.started = false;
    dp_inspector_free(a->job.result);
    a->job.result = NULL;
}

bool app_tick(struct app *a) {
    pthread_mutex_lock(&a->job.mu);
    enum app_job_state st = a->job.state;
    struct dp_inspector *res = a->job.result;
    char msg[256];
    app_copy(msg, sizeof msg, a->job.msg);
    bool running = st == APP_JOB_RUNNING;
    a->job.result = NULL;
    pthread_mutex_unlock(&a->job.mu);
    if (running) return true; /* the progress bar moves */
    if (!a->job.started) return false;
    pthread_join(a->job.thread, NULL);
    a->job.started = false;
    if (res) {
        struct dp_error err = {0};
        if (dp_session_add_transfer(a->ss, res, &a->job.plan.target, &err) < 0) {
            app_status(a, true, "transfer: %s", err.msg);
            return true;
        }
        a->dirty = true;
        app_refresh(a);
    }
    app_status(a, st != APP_JOB_DONE, "%s", msg);
    return true;
}

void app_job_snapshot(const struct app *a, enum app_job_state *st, double *progress,
                      char *phase, size_t n) {
    /* reading changes nothing the app shows: only the lock is taken (views draw from const) */
    pthread_mutex_t *mu = (pthread_mutex_t *)(uintptr_t)&a->job.mu;
    pthread_mutex_lock(mu);
    *st = a->job.state;
    *progress = a->job.progress;
    app_copy(phase, n, a->job.phase);
    pthread_mutex_unlock(mu);
}

/* ---- keeping a transfer ------------------------------------------------------------------- */

/* path with $HOME written "~" (a status line is short), into buf (n bytes). */
static void home_short(const char *path, char *buf, size_t n) {
    const char *home = getenv("HOME");
    size_t len = home ? strlen(home) : 0;
    if (len > 1 && !strncmp(path, home, len) && path[len] == '/')
        snprintf(buf, n, "~%s", path + len);
    else
        app_copy(buf, n, path);
}

bool app_transfer_save(struct app *a) {
    app_tick(a); /* a transfer that just finished counts */
    char path[512], shown[512];
    bool already;
    struct dp_error err = {0};
    enum dp_status st = dp_session_save_transfer(a->ss, &a->cur, path, sizeof path, &already, &err);
    if (st == DP_ERR_NOT_FOUND) {
        app_status(a, true, "%s (t transfers one)", err.msg);
        return false;
    }
    if (st) {
        app_status(a, true, "not saved: %s", err.msg);
        return false;
    }
    home_short(path, shown, sizeof shown);
    if (already) app_status(a, false, "saved already: %s", shown);
    else app_status(a, false, "saved to %s (%s, transferred on simulated data)", shown, a->cur.id);
    return true;
}

bool app_transfer_save_all(struct app *a) {
    int n = 0;
    struct dp_error err = {0};
    if (dp_session_save_all(a->ss, &n, &err) != DP_OK) {
        app_status(a, true, "not saved: %s", err.msg);
        return false;
    }
    app_status(a, false, "saved %d transferred inspector%s", n, n == 1 ? "" : "s");
    return true;
}

int app_unsaved(const struct app *a) { return dp_session_unsaved(a->ss); }

bool app_pred_unsaved(const struct app *a) {
    return a->pred.p.ok && dp_session_is_unsaved(a->ss, a->pred.p.from.inspector);
}
