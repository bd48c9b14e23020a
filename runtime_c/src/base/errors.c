/* errors.c — recording and rendering run-time errors.  A particle records only its first error
 * (later ones are usually consequences of the NaN it returned); the population loop turns it into the
 * filter's error text, rendered against the model's site table like the compiler's diagnostics. */
#include "base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_error[2048];

/* Used when even the error message cannot be allocated; never freed. */
static char oom_message[] = "out of memory";

static char *vformat(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int len = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (len < 0) return NULL;
  char *s = malloc((size_t)len + 1);
  if (s) vsnprintf(s, (size_t)len + 1, fmt, ap);
  return s;
}

char *rt_strdup_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vformat(fmt, ap);
  va_end(ap);
  return s;
}

double rt_fail(sirenrt_ctx *ctx, int32_t site, const char *fmt, ...) {
  if (ctx->err_msg == NULL) {
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(fmt, ap);
    va_end(ap);
    ctx->err_msg = s ? s : oom_message;
    ctx->err_site = site;
    ctx->flagged = 1;
  }
  return NAN;
}

void rt_free_message(char *s) {
  if (s != oom_message) free(s);
}

void rt_set_last_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
}

const char *sirenrt_last_error(void) { return last_error; }

int rt_site_known(const sirenrt_model *m, int32_t site) {
  return m && m->sites && site >= 0 && site < m->n_sites;
}

char *rt_render_site(const sirenrt_model *m, int32_t site, const char *kind, const char *msg) {
  if (!rt_site_known(m, site)) return rt_strdup_printf("%s: %s", kind, msg);
  const sirenrt_site *s = &m->sites[site];
  const char *file = s->file ? s->file : "<unknown>";
  if (!s->text) return rt_strdup_printf("%s:%d:%d: %s: %s", file, s->line, s->col, kind, msg);
  /* Tabs become single spaces so the caret column (a character count) lines up. */
  size_t tlen = strlen(s->text);
  char *line = malloc(tlen + 1);
  int col = s->col > 0 ? s->col : 1;
  int width = s->end_col > col ? s->end_col - col : 1;
  char *caret = malloc((size_t)col + (size_t)width + 1);
  char *out = NULL;
  if (line && caret) {
    for (size_t i = 0; i <= tlen; i++) line[i] = s->text[i] == '\t' ? ' ' : s->text[i];
    memset(caret, ' ', (size_t)col - 1);
    caret[col - 1] = '^';
    memset(caret + col, '~', (size_t)width - 1);
    caret[col - 1 + width] = '\0';
    out = rt_strdup_printf("%s:%d:%d: %s: %s\n%s\n%s", file, s->line, s->col, kind, msg, line, caret);
  }
  free(line);
  free(caret);
  return out;
}
