/* data.c — the program's input data (File.read) and the observation stream.
 *
 * A file is read once per run, lazily, into a table owned by the filter and shared read-only by all
 * particles (SPEC §0.2: not once per particle).  File 0 is special: run() may replace it with rows from
 * the caller, and step() turns it into a stream that grows one row at a time.  CSV rules are the
 * original's (SPEC §8) except that trailing blank lines are ignored. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rt_table_clear(rt_table *t) {
  t->loaded = 0;
  t->n_vals = 0;
  t->n_rows = 0;
  if (t->row_start) t->row_start[0] = 0;
}

void rt_table_free(rt_table *t) {
  free(t->vals);
  free(t->row_start);
  memset(t, 0, sizeof *t);
}

static int grow(void **p, int64_t *cap, int64_t need, size_t elem) {
  if (need <= *cap) return 0;
  int64_t c = *cap ? *cap * 2 : 64;
  if (c < need) c = need;
  void *q = realloc(*p, (size_t)c * elem);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

int rt_table_append_row(rt_table *t, const double *row, int64_t n) {
  if (n < 0 || n > RT_MAX_ROW_LEN || t->n_rows + 1 >= RT_MAX_ROWS) return -1;
  if (grow((void **)&t->vals, &t->cap_vals, t->n_vals + n, sizeof(double))) return -1;
  if (grow((void **)&t->row_start, &t->cap_rows, t->n_rows + 2, sizeof(int64_t))) return -1;
  if (n) memcpy(t->vals + t->n_vals, row, (size_t)n * sizeof(double));
  t->row_start[t->n_rows] = t->n_vals; /* also right for the first row */
  t->n_vals += n;
  t->n_rows++;
  t->row_start[t->n_rows] = t->n_vals;
  return 0;
}

/* ------------------------------------------------------------------ CSV ------------------------ */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* "path:line:col: error: msg" with the data line and a caret under [col, col+width). */
static char *data_error(const char *path, int64_t lineno, const char *line, size_t len, size_t col0, size_t width,
                        const char *msg) {
  char *text = malloc(len + 1), *caret = malloc(col0 + width + 1);
  char *out = NULL;
  if (text && caret) {
    for (size_t i = 0; i < len; i++) text[i] = line[i] == '\t' ? ' ' : line[i];
    text[len] = '\0';
    memset(caret, ' ', col0);
    caret[col0] = '^';
    if (width > 1) memset(caret + col0 + 1, '~', width - 1);
    caret[col0 + (width ? width : 1)] = '\0';
    out = rt_strdup_printf("%s:%lld:%zu: error: %s\n%s\n%s", path, (long long)lineno, col0 + 1, msg, text, caret);
  }
  free(text);
  free(caret);
  return out;
}

/* Python float() of one trimmed field, without the hex and "nan(...)" forms strtod also accepts.
 * (strtod follows LC_NUMERIC; hosts that change it from "C" would change the decimal point.) */
static int parse_field(const char *s, size_t len, double *out) {
  char small[128], *buf = len < sizeof small ? small : malloc(len + 1);
  if (len == 0 || !buf) return -1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  int ok = 1;
  for (size_t i = 0; i < len; i++)
    if (buf[i] == 'x' || buf[i] == 'X' || buf[i] == '(') ok = 0;
  char *end = buf;
  if (ok) *out = strtod(buf, &end); /* overflow to +-inf is fine, as in Python */
  ok = ok && end == buf + len;
  if (buf != small) free(buf);
  return ok ? 0 : -1;
}

/* Parses one data line into row[]; returns the field count or -1 with *err set. */
static int64_t parse_line(const char *path, int64_t lineno, const char *line, size_t len, double **row,
                          int64_t *cap, char **err) {
  int64_t n = 0;
  size_t pos = 0;
  for (;;) {
    size_t start = pos;
    while (pos < len && line[pos] != ',') pos++;
    size_t a = start, b = pos; /* trim the field */
    while (a < b && is_space(line[a])) a++;
    while (b > a && is_space(line[b - 1])) b--;
    if (a == b) {
      *err = data_error(path, lineno, line, len, a, 1, "empty field");
      return -1;
    }
    if (grow((void **)row, cap, n + 1, sizeof(double)) || n + 1 > RT_MAX_ROW_LEN) {
      *err = rt_strdup_printf("%s:%lld: error: row too long or out of memory", path, (long long)lineno);
      return -1;
    }
    if (parse_field(line + a, b - a, &(*row)[n])) {
      char msg[96];
      snprintf(msg, sizeof msg, "cannot parse '%.*s' as a number", (int)(b - a > 40 ? 40 : b - a), line + a);
      *err = data_error(path, lineno, line, len, a, b - a, msg);
      return -1;
    }
    n++;
    if (pos >= len) return n;
    pos++; /* skip the comma */
  }
}

static char *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, fp);
    if (n < cap) break;
    char *b = realloc(buf, cap * 2);
    if (!b) {
      free(buf);
      buf = NULL;
      errno = ENOMEM;
      break;
    }
    buf = b;
    cap *= 2;
  }
  if (buf && ferror(fp)) {
    free(buf);
    buf = NULL;
  }
  int saved = errno;
  fclose(fp);
  errno = saved;
  *len = n;
  return buf;
}

int rt_table_read_csv(rt_table *t, const char *path, char **err) {
  *err = NULL;
  size_t len;
  char *text = slurp(path, &len);
  if (!text) {
    *err = rt_strdup_printf("cannot read data file '%s': %s", path, strerror(errno));
    return -1;
  }
  rt_table_clear(t);
  /* Trailing blank lines are ignored: find where the last non-blank character ends. */
  size_t end = len;
  while (end > 0 && (is_space(text[end - 1]) || text[end - 1] == '\n')) end--;
  double *row = NULL;
  int64_t cap = 0, lineno = 1;
  size_t pos = 0;
  while (pos < len && text[pos] != '\n') pos++; /* the header line */
  int status = 0;
  while (pos < end) {
    pos++; /* past '\n' */
    lineno++;
    size_t start = pos;
    while (pos < len && text[pos] != '\n') pos++;
    size_t a = start, b = pos;
    while (a < b && is_space(text[a])) a++;
    while (b > a && is_space(text[b - 1])) b--;
    if (a == b) {
      *err = data_error(path, lineno, text + start, pos - start, 0, 1, "empty line");
      status = -1;
      break;
    }
    int64_t n = parse_line(path, lineno, text + start, b - start, &row, &cap, err);
    if (n < 0 || rt_table_append_row(t, row, n)) {
      if (!*err) *err = rt_strdup_printf("%s:%lld: error: too much data or out of memory", path, (long long)lineno);
      status = -1;
      break;
    }
  }
  free(row);
  free(text);
  if (status == 0) __atomic_store_n(&t->loaded, 1, __ATOMIC_RELEASE);
  return status;
}

/* ------------------------------------------------------------------ the ABI -------------------- */

static int load_table(sirenrt_ctx *ctx, rt_table *t, int32_t id, int32_t site) {
  sirenrt_filter *f = ctx->filter;
  if (t->loaded) return 0; /* another particle read it while this one waited for the lock */
  const char *path = f->model->files[id];
  char *err = NULL;
  if (rt_table_read_csv(t, path, &err) == 0) return 0;
  if (err && strncmp(err, "cannot read", 11) == 0) {
    rt_fail(ctx, site, "%s", err); /* a missing file: point at the File.read */
  } else if (ctx->err_msg == NULL && err) {
    /* A malformed file: the data file's location leads, the File.read is a note. */
    char *note = rt_site_known(f->model, site) ? rt_render_site(f->model, site, "note", "data file read here") : NULL;
    ctx->err_msg = note ? rt_strdup_printf("%s\n%s", err, note) : rt_strdup_printf("%s", err);
    ctx->err_site = RT_SITE_RENDERED;
    ctx->flagged = 1;
    free(note);
    if (!ctx->err_msg) rt_fail(ctx, site, "out of memory");
  } else {
    rt_fail(ctx, site, "out of memory");
  }
  free(err);
  return -1;
}

/* Reads file `id` on first use.  Particles may run on several threads: the first to need the file
 * reads it under the filter's lock, and the others see it loaded (acquire/release on `loaded`). */
int rt_ensure_table(sirenrt_ctx *ctx, int32_t id, int32_t site) {
  sirenrt_filter *f = ctx->filter;
  if (!f || id < 0 || id >= f->model->n_files) {
    rt_fail(ctx, site, "internal error: no data file %d", (int)id);
    return -1;
  }
  rt_table *t = &f->tables[id];
  if (__atomic_load_n(&t->loaded, __ATOMIC_ACQUIRE)) return 0;
  pthread_mutex_lock(&f->table_lock);
  int status = load_table(ctx, t, id, site);
  pthread_mutex_unlock(&f->table_lock);
  return status;
}

int64_t sirenrt_file(sirenrt_ctx *ctx, int32_t file_id, int32_t site) {
  if (rt_ensure_table(ctx, file_id, site)) return SIRENRT_NIL;
  return ctx->filter->tables[file_id].n_rows > 0 ? rt_shared_rows(file_id, 0) : SIRENRT_NIL;
}

int64_t sirenrt_stream_row(sirenrt_ctx *ctx, int64_t index) {
  if (rt_ensure_table(ctx, 0, -1)) return SIRENRT_END;
  const rt_table *t = &ctx->filter->tables[0];
  if (index >= 0 && index < t->n_rows) return rt_row_handle(t, 0, index);
  if (index < 0) {
    rt_fail(ctx, -1, "internal error: stream row %lld", (long long)index);
    return SIRENRT_END;
  }
  if (!ctx->filter->stream_open) return SIRENRT_END;
  ctx->want_row = index; /* lets the population loop resume this particle once the row arrives */
  return SIRENRT_NEED;
}
