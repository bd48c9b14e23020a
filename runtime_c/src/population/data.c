/* data.c — the program's input data (File.read) and the observation stream.
 *
 * A file is read once per run, lazily, into a table owned by the filter and shared read-only by all
 * particles (ARCHITECTURE.md §0.2: not once per particle).  File 0 is special: run() may replace it with rows from
 * the caller, and step() turns it into a stream that grows one row at a time.  CSV rules are the
 * original's (ARCHITECTURE.md §8) except that trailing blank lines are ignored.
 *
 * A file's table counts against the filter's memory limit (memory.c): its text while it is parsed,
 * and the table's arrays as they grow, each reserved before it is allocated, so that a file too big
 * for the limit fails at its File.read with the limit named, instead of exhausting the host's
 * memory.  It is read once and shared by all particles, so it is counted once. */
#define _POSIX_C_SOURCE 200809L /* open's O_CLOEXEC, fdopen */
#include "population.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* `loaded` publishes a table to the particles' threads: rt_ensure_table reads it without the lock
 * (acquire), so every write of it is atomic too, also this one, which a reader may meet while
 * another particle's thread reads the file under the lock (issue 11: TSan saw the plain write race
 * with that read). */
void rt_table_clear(rt_table *t) {
  __atomic_store_n(&t->loaded, 0, __ATOMIC_RELAXED);
  t->n_vals = 0;
  t->n_rows = 0;
  if (t->row_start) t->row_start[0] = 0;
}

void rt_table_free(rt_table *t) {
  free(t->vals);
  free(t->row_start);
  memset(t, 0, sizeof *t);
}

/* Grows *p to hold `need` elements of 8 bytes (doubling); -1 out of memory, -2 over the budget (what
 * a table holds of its budget is its capacities, which clearing keeps). */
static int grow(void **p, int64_t *cap, int64_t need, rt_budget *budget) {
  if (need <= *cap) return 0;
  int64_t c = *cap ? *cap * 2 : 64;
  if (c < need) c = need;
  if (!rt_budget_take(budget, (uint64_t)(c - *cap))) {
    if (c == need || !rt_budget_take(budget, (uint64_t)(need - *cap))) return -2;
    c = need; /* room for this row, not for doubling */
  }
  void *q = realloc(*p, (size_t)c * sizeof(uint64_t));
  if (!q) {
    rt_budget_give(budget, (uint64_t)(c - *cap));
    return -1;
  }
  *p = q;
  *cap = c;
  return 0;
}

int rt_table_append_row(rt_table *t, const double *row, int64_t n) {
  if (n < 0 || n > RT_MAX_ROW_LEN || t->n_rows + 1 >= RT_MAX_ROWS) return -1;
  int status = grow((void **)&t->vals, &t->cap_vals, t->n_vals + n, t->budget);
  if (!status) status = grow((void **)&t->row_start, &t->cap_rows, t->n_rows + 2, t->budget);
  if (status) return status;
  if (n) memcpy(t->vals + t->n_vals, row, (size_t)n * sizeof(double));
  t->row_start[t->n_rows] = t->n_vals; /* also right for the first row */
  t->n_vals += n;
  t->n_rows++;
  t->row_start[t->n_rows] = t->n_vals;
  return 0;
}

/* ------------------------------------------------------------------ CSV ------------------------ */
/* The one CSV reader: File.read and `sirenc run --data` (through sirenrt_read_csv) both use it.
 * Grammar (also in sirenrt.h and docs/language.md):
 *   the file is UTF-8; a leading byte order mark is skipped; lines end in \n, \r\n or \r;
 *   line 1 is a header and is skipped; blank lines at the end are ignored, any other empty line or
 *   empty field is an error; fields are separated by commas and may have spaces or tabs around
 *   them; a field is a number as C's strtod reads it in the "C" locale, in ASCII only: digits, a
 *   sign, a decimal point, an exponent, inf/infinity/nan in any case (no hex, no nan(...), no '_');
 *   rows may have different numbers of fields (at most RT_MAX_ROW_LEN). */

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

static size_t utf8_len(const unsigned char *s, size_t n);

/* How an error shows byte i of a line: a tab as one space, NUL as \0, other control bytes and bytes
 * that are not UTF-8 as \xNN, the rest as it is.  Returns the bytes it stands for (*out: its text,
 * *width: its columns). */
static size_t shown(const char *line, size_t len, size_t i, char out[8], size_t *width) {
  unsigned char c = (unsigned char)line[i];
  size_t k = c >= 0x80 ? utf8_len((const unsigned char *)line + i, len - i) : 1;
  if (c == '\0') {
    memcpy(out, "\\0", 3);
    *width = 2;
    return 1;
  }
  if ((c < 0x20 && c != '\t') || c == 0x7f || k == 0) {
    snprintf(out, 8, "\\x%02X", c);
    *width = 4;
    return 1;
  }
  memcpy(out, c == '\t' ? " " : line + i, k);
  out[k] = '\0';
  *width = 1;
  return k;
}

/* The first n bytes of the line as an error shows them; *cols: their width. */
static char *show_line(const char *line, size_t n, size_t *cols) {
  char *out = malloc(4 * n + 1), piece[8];
  size_t o = 0, w, total = 0;
  if (!out) return NULL;
  for (size_t i = 0; i < n;) {
    i += shown(line, n, i, piece, &w);
    size_t k = strlen(piece);
    memcpy(out + o, piece, k);
    o += k;
    total += w;
  }
  out[o] = '\0';
  if (cols) *cols = total;
  return out;
}

/* "path:line:col: error: msg" with the data line and a caret under bytes [b0, b0+nb) of the line;
 * col counts characters (UTF-8), 1-based. */
static char *data_error(const char *path, int64_t lineno, const char *line, size_t len, size_t b0, size_t nb,
                        const char *msg) {
  size_t col0 = 0, width = 0, chars = 0, before = b0 < len ? b0 : len, upto = b0 + nb < len ? b0 + nb : len;
  char *head = show_line(line, before, &col0), *field = show_line(line, upto, &width);
  free(head);
  free(field);
  width = width > col0 ? width - col0 : 1;
  for (size_t i = 0; i < before; i++) chars += ((unsigned char)line[i] & 0xc0) != 0x80;
  /* A long line is shown around the caret only: about 60 bytes either side of the field. */
  size_t from = before > 60 ? before - 60 : 0, to = upto + 60 < len ? upto + 60 : len;
  while (from > 0 && ((unsigned char)line[from] & 0xc0) == 0x80) from--;
  while (to < len && ((unsigned char)line[to] & 0xc0) == 0x80) to++;
  if (from > 0) {
    size_t skipped;
    char *cut = show_line(line, from, &skipped);
    free(cut);
    col0 = col0 - skipped + 3; /* "..." */
  }
  if (width > 200) width = 200;
  char *shown_text = show_line(line + from, to - from, NULL), *caret = malloc(col0 + width + 1);
  char *text = shown_text ? rt_strdup_printf("%s%s%s", from > 0 ? "..." : "", shown_text, to < len ? "..." : "") : NULL;
  free(shown_text);
  char *out = NULL;
  if (text && caret) {
    memset(caret, ' ', col0);
    caret[col0] = '^';
    if (width > 1) memset(caret + col0 + 1, '~', width - 1);
    caret[col0 + width] = '\0';
    out = rt_strdup_printf("%s:%lld:%zu: error: %s\n%s\n%s", path, (long long)lineno, chars + 1, msg, text, caret);
  }
  free(text);
  free(caret);
  return out;
}

/* One trimmed field as a number (grammar above); strtod only ever sees the ASCII characters of
 * a decimal or inf/nan literal, so neither hex floats nor a locale's other digits get through. */
static int parse_field(const char *s, size_t len, double *out) {
  static const char allowed[] = "0123456789+-.eEiInNfFtTyYaA";
  char small[128], *buf = len < sizeof small ? small : malloc(len + 1);
  if (len == 0 || !buf) return -1;
  int ok = 1;
  for (size_t i = 0; i < len; i++)
    if (s[i] == '\0' || !strchr(allowed, s[i])) ok = 0;
  memcpy(buf, s, len);
  buf[len] = '\0';
  char *end = buf;
  if (ok) *out = strtod(buf, &end); /* overflow to +-inf is fine, as in Python */
  ok = ok && end == buf + len;
  if (buf != small) free(buf);
  return ok ? 0 : -1;
}

/* The field as a message quotes it (escaped as in show_line), at most 40 bytes of it. */
static void quote_field(char *dst, size_t cap, const char *s, size_t len) {
  size_t o = 0, w;
  char piece[8];
  for (size_t i = 0; i < len;) {
    if (i >= 40) {
      snprintf(dst + o, cap - o, "...");
      return;
    }
    i += shown(s, len, i, piece, &w);
    size_t k = strlen(piece);
    if (o + k + 4 > cap) break;
    memcpy(dst + o, piece, k);
    o += k;
  }
  dst[o] = '\0';
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
    while (a < b && is_blank(line[a])) a++;
    while (b > a && is_blank(line[b - 1])) b--;
    if (a == b) {
      *err = data_error(path, lineno, line, len, a, 1, "empty field");
      return -1;
    }
    if (n + 1 > RT_MAX_ROW_LEN) {
      char msg[96];
      snprintf(msg, sizeof msg, "row too wide: more than %lld fields", (long long)RT_MAX_ROW_LEN);
      *err = data_error(path, lineno, line, len, a, b - a, msg);
      return -1;
    }
    if (grow((void **)row, cap, n + 1, NULL)) { /* one row's scratch: its text is counted */
      *err = rt_strdup_printf("%s:%lld: error: out of memory", path, (long long)lineno);
      return -1;
    }
    if (parse_field(line + a, b - a, &(*row)[n])) {
      char msg[300], quoted[240];
      quote_field(quoted, sizeof quoted, line + a, b - a);
      snprintf(msg, sizeof msg, "cannot parse '%s' as a number", quoted);
      *err = data_error(path, lineno, line, len, a, b - a, msg);
      return -1;
    }
    n++;
    if (pos >= len) return n;
    pos++; /* skip the comma */
  }
}

/* The file's text; NULL with errno set (or *why, below), or with *over set when its size (*len) is
 * more than the budget has left.  What it reserved of the budget is *reserved, to give back once
 * parsed.  Only a regular file is data: a directory "read" as one seeked to LONG_MAX (8 EiB
 * "needed"), and opening a FIFO without a writer would block the caller for ever, so the file is
 * opened without blocking and anything else refused, *why saying what it is. */
static char *slurp(const char *path, size_t *len, rt_budget *budget, uint64_t *reserved, int *over,
                   const char **why) {
  *reserved = 0;
  *over = 0;
  *why = NULL;
  if (!*path) return *why = "the file name is empty", NULL;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  int known = fstat(fd, &st) == 0;
  if (known && !S_ISREG(st.st_mode))
    *why = S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file (a pipe, a device or a socket)";
  FILE *fp = known && !*why ? fdopen(fd, "rb") : NULL;
  if (!fp) {
    int saved = errno;
    close(fd);
    errno = saved;
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  long size = st.st_size <= LONG_MAX ? (long)st.st_size : -1;
  if (size > 0) {
    uint64_t words = ((uint64_t)size + 1 + 7) / 8;
    if (!rt_budget_take(budget, words)) {
      fclose(fp);
      *len = (size_t)size;
      *over = 1;
      return NULL;
    }
    if (budget) *reserved = words;
    cap = (size_t)size + 1; /* read at once: the text is not held twice while a buffer doubles */
  }
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

/* Length of the UTF-8 sequence at s (at most n bytes), or 0 if it is not well formed. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  if (s[0] < 0x80) return 1;
  size_t k = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
  if (k == 0 || k > n) return 0;
  for (size_t i = 1; i < k; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  if (k == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))) return 0;
  if (k == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))) return 0;
  return k;
}

/* End of the line starting at pos (its terminator, or len), and where the next line starts. */
static size_t line_end(const char *text, size_t len, size_t pos, size_t *next) {
  while (pos < len && text[pos] != '\n' && text[pos] != '\r') pos++;
  *next = pos < len ? pos + 1 + (text[pos] == '\r' && pos + 1 < len && text[pos + 1] == '\n') : len;
  return pos;
}

static int is_blank_line(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!is_blank(s[i])) return 0;
  return 1;
}

int rt_table_read_csv(rt_table *t, const char *path, char **err) {
  *err = NULL;
  size_t len;
  uint64_t text_words;
  int over;
  const char *why;
  char *text = slurp(path, &len, t->budget, &text_words, &over, &why);
  if (over) {
    *err = rt_budget_data_message(t->budget, path, (uint64_t)len);
    return -2;
  }
  if (!text) {
    rt_budget_give(t->budget, text_words);
    *err = rt_strdup_printf("cannot read data file '%s': %s", path, why ? why : strerror(errno));
    return -1;
  }
  rt_table_clear(t);
  size_t pos = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0, body = pos;
  int status = 0;
  /* The whole file must be UTF-8 (the header too): report the first bad byte where it is. */
  int64_t lineno = 1;
  for (size_t i = body, line0 = body; i < len;) {
    size_t k = utf8_len((const unsigned char *)text + i, len - i);
    if (k == 0) {
      size_t next, e = line_end(text, len, line0, &next);
      char msg[80];
      snprintf(msg, sizeof msg, "the file is not UTF-8 text (byte 0x%02X)", (unsigned char)text[i]);
      *err = data_error(path, lineno, text + line0, e - line0, i - line0, 1, msg);
      free(text);
      rt_budget_give(t->budget, text_words);
      return -1;
    }
    if (text[i] == '\n' || (text[i] == '\r' && !(i + 1 < len && text[i + 1] == '\n'))) {
      lineno++;
      line0 = i + 1;
    }
    i += k;
  }
  /* Trailing blank lines are ignored: find where the last non-blank line ends. */
  size_t end = len;
  while (end > body && (is_blank(text[end - 1]) || text[end - 1] == '\n' || text[end - 1] == '\r')) end--;
  double *row = NULL;
  int64_t cap = 0;
  lineno = 1;
  size_t next;
  line_end(text, len, pos, &next); /* the header line */
  pos = next;
  while (pos < end) {
    lineno++;
    size_t start = pos, stop = line_end(text, len, pos, &next);
    pos = next;
    if (is_blank_line(text + start, stop - start)) {
      *err = data_error(path, lineno, text + start, stop - start, 0, 1, "empty line");
      status = -1;
      break;
    }
    int64_t n = parse_line(path, lineno, text + start, stop - start, &row, &cap, err);
    int appended = n < 0 ? -1 : rt_table_append_row(t, row, n);
    if (appended == -2) {
      /* What its table has taken so far and this row, more than the limit leaves beside the text. */
      uint64_t table = (uint64_t)(t->cap_vals + t->cap_rows) * sizeof(uint64_t) + (uint64_t)n * sizeof(double);
      *err = rt_budget_data_message(t->budget, path, table + text_words * sizeof(uint64_t));
      status = -2;
      break;
    }
    if (appended) {
      if (!*err) *err = rt_strdup_printf("%s:%lld: error: too many rows or out of memory", path, (long long)lineno);
      status = -1;
      break;
    }
  }
  free(row);
  free(text);
  rt_budget_give(t->budget, text_words);
  if (status == 0) __atomic_store_n(&t->loaded, 1, __ATOMIC_RELEASE);
  return status;
}

int32_t sirenrt_read_csv(const char *path, double **vals, int64_t **row_start, int64_t *n_rows, char **error) {
  if (error) *error = NULL;
  if (!path || !vals || !row_start || !n_rows || !error) return rt_set_last_error("sirenrt_read_csv: bad arguments"), 1;
  *vals = NULL;
  *row_start = NULL;
  *n_rows = 0;
  rt_table t;
  memset(&t, 0, sizeof t);
  if (rt_table_read_csv(&t, path, error)) {
    rt_table_free(&t);
    if (!*error) *error = rt_strdup_printf("%s: error: out of memory", path);
    return 1;
  }
  if (!t.row_start) {
    t.row_start = calloc(1, sizeof(int64_t));
    if (!t.row_start) {
      rt_table_free(&t);
      *error = rt_strdup_printf("%s: error: out of memory", path);
      return 1;
    }
  }
  *vals = t.vals;
  *row_start = t.row_start;
  *n_rows = t.n_rows;
  return 0;
}

void sirenrt_free(void *p) { free(p); }

/* ------------------------------------------------------------------ the ABI -------------------- */

static int load_table(sirenrt_ctx *ctx, rt_table *t, int32_t id, int32_t site) {
  sirenrt_filter *f = ctx->filter;
  /* another particle read it while this one waited for the lock */
  if (__atomic_load_n(&t->loaded, __ATOMIC_RELAXED)) return 0;
  const char *path = rt_file_path(f, id);
  char *err = NULL;
  int status = rt_table_read_csv(t, path, &err);
  if (status == 0) return 0;
  if (err && (status == -2 || strncmp(err, "cannot read", 11) == 0)) {
    rt_fail(ctx, site, "%s", err); /* a missing file, or one too big for the limit: point at the File.read */
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

/* Everything but a row the table already holds: reading the file, the end of the data, a row still to
 * come, a bad index.  Out of line, so that the hot path saves no registers. */
__attribute__((noinline)) static int64_t stream_row_slow(sirenrt_ctx *ctx, int64_t index, int32_t site) {
  if (rt_ensure_table(ctx, 0, site)) return SIRENRT_END;
  const rt_table *t = &ctx->filter->tables[0];
  if (index >= 0 && index < t->n_rows) return rt_row_handle(t, 0, index);
  if (index < 0) {
    rt_fail(ctx, site, "internal error: stream row %lld", (long long)index);
    return SIRENRT_END;
  }
  if (!ctx->filter->stream_open) return SIRENRT_END;
  ctx->want_row = index; /* lets the population loop resume this particle once the row arrives */
  return SIRENRT_NEED;
}

/* File 0 once it is read, else NULL.  Loaded, a table changes only between passes (a streamed row, a
 * new run): not while a particle runs. */
static const rt_table *loaded_stream(const sirenrt_filter *f) {
  if (!f || f->model->n_files == 0) return NULL;
  const rt_table *t = &f->tables[0];
  return __atomic_load_n(&t->loaded, __ATOMIC_ACQUIRE) ? t : NULL;
}

const sirenrt_rows *rt_stream_rows(const sirenrt_filter *f) {
  static const sirenrt_rows none = {NULL, NULL, 0};
  const rt_table *t = loaded_stream(f);
  return t ? (const sirenrt_rows *)t : &none;
}

/* The hot case (every particle-step of a streamed program) is a row the table already holds. */
int64_t sirenrt_stream_row(sirenrt_ctx *ctx, int64_t index, int32_t site) {
  const rt_table *t = loaded_stream(ctx->filter);
  if (t && index >= 0 && index < t->n_rows) return rt_row_handle(t, 0, index);
  return stream_row_slow(ctx, index, site);
}
