/* failure.c — how a filter fails, and how it refuses a call: the text sirenrt_filter_error reports.
 *
 * A filter FAILS when one of its runs breaks (a particle's error, a zero total weight, memory): it
 * keeps the failure's message, and the calls that read its population (estimate, particles,
 * posterior, and step on the broken stream) are refused with it again (rt_filter_failed) until run()
 * starts afresh.  A REFUSED call changes nothing but the error: the filter goes on.  Particles record their own errors on their contexts (errors.c); the
 * population loop turns the first one of a pass into the filter's (rt_fail_from_particle). */
#include "population.h"

#include <stdlib.h>
#include <string.h>

int rt_filter_refuse(sirenrt_filter *f, char *msg) {
  /* The loader checks what a checkpoint can break cheaply (checkpoint.c); the engine's deeper
   * invariants (a root variable's parameters, say) are found where they are used, and then the
   * checkpoint, not sirenc, is the likely culprit. */
  if (msg && f->restored && strstr(msg, "internal error")) {
    char *noted = rt_strdup_printf("%s\n  note: this filter was restored from a checkpoint, which may be damaged or "
                                   "forged: a checkpoint sirenc wrote does not do this", msg);
    if (noted) {
      free(msg);
      msg = noted;
    }
  }
  free(f->error);
  f->error = msg ? msg : rt_strdup_printf("error: out of memory");
  return 1;
}

int rt_filter_fail(sirenrt_filter *f, char *msg) {
  f->failed = 1;
  f->est_valid = 0;
  rt_filter_refuse(f, msg);
  free(f->failure);
  f->failure = f->error ? rt_strdup_printf("%s", f->error) : NULL;
  return 1;
}

int rt_filter_failed(sirenrt_filter *f) {
  return rt_filter_refuse(f, rt_strdup_printf("%s", f->failure ? f->failure : "error: the filter's last run failed: "
                                                                               "run() restarts it"));
}

/* Turns a particle's recorded error into the filter's rendered error. */
int rt_fail_from_particle(sirenrt_filter *f, sirenrt_ctx *c) {
  char *msg = c->err_site == RT_SITE_RENDERED ? rt_strdup_printf("%s", c->err_msg)
                                              : rt_render_site(f->model, c->err_site, "error", c->err_msg);
  rt_free_message(c->err_msg);
  c->err_msg = NULL;
  return rt_filter_fail(f, msg);
}

int rt_zero_weight_error(sirenrt_filter *f) {
  return rt_filter_fail(f, rt_render_site(f->model, f->last_zero_site, "error", "all particles have zero weight"));
}
