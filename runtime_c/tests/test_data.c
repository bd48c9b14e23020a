/* test_data.c — the CSV reader (ARCHITECTURE.md §8 with §0.2): header skipped, Python-float fields, ragged rows,
 * trailing blank lines ignored, and errors naming path:line:col with a caret for malformed files. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "population/population.h"

static char dir[] = "/tmp/sirenrt_test_data_XXXXXX";

static const char *write_file(const char *name, const char *text) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *fp = fopen(path, "wb");
  fputs(text, fp);
  fclose(fp);
  return path;
}

static double at(const rt_table *t, int64_t r, int64_t k) { return t->vals[t->row_start[r] + k]; }

static void test_good_files(void) {
  rt_table t;
  memset(&t, 0, sizeof t);
  char *err = NULL;
  const char *p = write_file("good.csv", "y,z\n1,2\n 3.5 , -4e2\ninf,-inf\nnan,1E-3\n7\n");
  CHECK(rt_table_read_csv(&t, p, &err) == 0, "good.csv: %s", err ? err : "");
  CHECK(t.loaded && t.n_rows == 5, "5 rows, got %lld", (long long)t.n_rows);
  CHECK(at(&t, 0, 0) == 1 && at(&t, 0, 1) == 2, "row 0");
  CHECK(at(&t, 1, 0) == 3.5 && at(&t, 1, 1) == -400, "surrounding spaces and exponents");
  CHECK(isinf(at(&t, 2, 0)) && at(&t, 2, 1) == -INFINITY, "inf");
  CHECK(isnan(at(&t, 3, 0)) && at(&t, 3, 1) == 1e-3, "nan");
  CHECK(rt_row_len(&t, 4) == 1 && at(&t, 4, 0) == 7, "rows may differ in length");

  char longrow[400] = "h\n0.";
  for (int i = 0; i < 300; i++) strcat(longrow, i == 299 ? "1" : "0");
  strcat(longrow, "e300\n");
  p = write_file("long.csv", longrow);
  CHECK(rt_table_read_csv(&t, p, &err) == 0 && t.n_rows == 1 && fabs(at(&t, 0, 0) - 1.0) < 1e-12,
        "a 300-digit field parses");
  p = write_file("trailing.csv", "h\n1\n2\n\n  \n\n");
  CHECK(rt_table_read_csv(&t, p, &err) == 0 && t.n_rows == 2, "trailing blank lines are ignored");
  p = write_file("crlf.csv", "h\r\n1,2\r\n3,4\r\n");
  CHECK(rt_table_read_csv(&t, p, &err) == 0 && t.n_rows == 2 && at(&t, 1, 1) == 4, "CRLF line ends");
  p = write_file("nonl.csv", "h\n1\n2");
  CHECK(rt_table_read_csv(&t, p, &err) == 0 && t.n_rows == 2 && at(&t, 1, 0) == 2, "no final newline");
  p = write_file("header.csv", "just a header\n");
  CHECK(rt_table_read_csv(&t, p, &err) == 0 && t.n_rows == 0, "header only: no rows");
  p = write_file("empty.csv", "");
  CHECK(rt_table_read_csv(&t, p, &err) == 0 && t.n_rows == 0, "empty file: no rows");
  p = write_file("cr.csv", "h\r1,2\r3,4\r\r");
  CHECK(rt_table_read_csv(&t, p, &err) == 0 && t.n_rows == 2 && at(&t, 1, 1) == 4, "CR-only line ends");
  p = write_file("mixed.csv", "h\n1\r\n2\r3\n");
  CHECK(rt_table_read_csv(&t, p, &err) == 0 && t.n_rows == 3 && at(&t, 2, 0) == 3, "mixed line ends");
  p = write_file("bom.csv", "\xEF\xBB\xBFh\n5\n");
  CHECK(rt_table_read_csv(&t, p, &err) == 0 && t.n_rows == 1 && at(&t, 0, 0) == 5, "a BOM is skipped");
  p = write_file("bomrow.csv", "\xEF\xBB\xBF" "1,2\n5\n");
  CHECK(rt_table_read_csv(&t, p, &err) == 0 && t.n_rows == 1, "a BOM before the header");
  p = write_file("latin.csv", "temp\xC3\xA9rature\n5\n");
  CHECK(rt_table_read_csv(&t, p, &err) == 0 && t.n_rows == 1, "a UTF-8 header");
  p = write_file("big.csv", "h\n1e999,-1e999,INFINITY,NaN\n");
  CHECK(rt_table_read_csv(&t, p, &err) == 0 && isinf(at(&t, 0, 0)) && at(&t, 0, 1) == -INFINITY &&
            isinf(at(&t, 0, 2)) && isnan(at(&t, 0, 3)), "overflow to inf, inf/nan words");
  rt_table_free(&t);
}

static void test_read_csv_abi(void) {
  double *vals = NULL;
  int64_t *starts = NULL, n = -1;
  char *err = NULL;
  const char *p = write_file("abi.csv", "a,b\r\n1,2\r\n3\r\n");
  CHECK(sirenrt_read_csv(p, &vals, &starts, &n, &err) == 0 && !err, "sirenrt_read_csv");
  CHECK(n == 2 && starts[0] == 0 && starts[1] == 2 && starts[2] == 3 && vals[2] == 3, "ragged rows");
  sirenrt_free(vals);
  sirenrt_free(starts);
  p = write_file("abi0.csv", "a\n");
  CHECK(sirenrt_read_csv(p, &vals, &starts, &n, &err) == 0 && n == 0 && starts && starts[0] == 0, "no rows");
  sirenrt_free(vals);
  sirenrt_free(starts);
  p = write_file("abibad.csv", "a\n1_000\n");
  CHECK(sirenrt_read_csv(p, &vals, &starts, &n, &err) != 0 && err && !vals && !starts, "1_000 is rejected");
  if (err) CHECK_CONTAINS(err, ":2:1: error: cannot parse '1_000' as a number");
  sirenrt_free(err);
  CHECK(sirenrt_read_csv(NULL, &vals, &starts, &n, &err) != 0, "no path");
}

static void expect_bad(const char *name, const char *text, const char *needle1, const char *needle2) {
  rt_table t;
  memset(&t, 0, sizeof t);
  char *err = NULL;
  const char *p = write_file(name, text);
  CHECK(rt_table_read_csv(&t, p, &err) != 0, "%s must be rejected", name);
  CHECK(!t.loaded, "%s: a failed read leaves the table unloaded", name);
  if (err) {
    CHECK_CONTAINS(err, needle1);
    CHECK_CONTAINS(err, needle2);
  } else {
    CHECK(0, "%s: no message", name);
  }
  free(err);
  rt_table_free(&t);
}

static void test_bad_files(void) {
  char where[600];
  snprintf(where, sizeof where, "%s/badfield.csv:3:5: error: cannot parse 'abc' as a number", dir);
  expect_bad("badfield.csv", "y,z\n1,2\n3 , abc\n", where, "\n3 , abc\n    ^~~");
  snprintf(where, sizeof where, "%s/emptyfield.csv:2:3: error: empty field", dir);
  expect_bad("emptyfield.csv", "y\n1,\n", where, "1,\n  ^");
  snprintf(where, sizeof where, "%s/emptyline.csv:3:1: error: empty line", dir);
  expect_bad("emptyline.csv", "y\n1\n\n2\n", where, "empty line");
  expect_bad("hex.csv", "y\n0x10\n", "cannot parse '0x10'", ":2:1:");
  expect_bad("nanparen.csv", "y\nnan(1)\n", "cannot parse", ":2:1:");
  expect_bad("junk.csv", "y\n1.5x\n", "cannot parse '1.5x'", ":2:1:");
  expect_bad("underscore.csv", "y\n1_000\n", "cannot parse '1_000'", ":2:1:");
  expect_bad("arabic.csv", "y\n1,\xD9\xA3\n", "cannot parse '\xD9\xA3'", ":2:3:");
  expect_bad("crempty.csv", "y\r1\r\r2\r", ":3:1: error: empty line", "empty line");
  expect_bad("notutf8.csv", "y\n1\n2,\xE9\n", ":3:3: error: the file is not UTF-8 text (byte 0xE9)", "2,");
  expect_bad("space.csv", "y\n1 2\n", "cannot parse '1 2'", ":2:1:");
  char missing[600];
  snprintf(missing, sizeof missing, "cannot read data file '%s/missing.csv': No such file or directory", dir);
  rt_table t;
  memset(&t, 0, sizeof t);
  char *err = NULL, path[600];
  snprintf(path, sizeof path, "%s/missing.csv", dir);
  CHECK(rt_table_read_csv(&t, path, &err) != 0 && err, "missing file");
  if (err) CHECK_CONTAINS(err, missing);
  free(err);
  rt_table_free(&t);
}

static void test_nul(void) {
  char path[600];
  snprintf(path, sizeof path, "%s/nul.csv", dir);
  FILE *fp = fopen(path, "wb");
  fwrite("y\n1,2\0 3\n", 1, 10, fp);
  fclose(fp);
  rt_table t;
  memset(&t, 0, sizeof t);
  char *err = NULL;
  CHECK(rt_table_read_csv(&t, path, &err) != 0 && err, "a NUL in a field is rejected");
  if (err) {
    CHECK_CONTAINS(err, ":2:3: error: cannot parse '2\\0 3' as a number");
    CHECK_CONTAINS(err, "\n1,2\\0 3\n  ^~~~~");
  }
  free(err);
  rt_table_free(&t);
}

static void test_append_rows(void) {
  rt_table t;
  memset(&t, 0, sizeof t);
  double row[3] = {1, 2, 3};
  for (int i = 0; i < 1000; i++) {
    row[0] = i;
    CHECK(rt_table_append_row(&t, row, i % 4) == 0, "append");
  }
  CHECK(t.n_rows == 1000 && rt_row_len(&t, 3) == 3 && rt_row_len(&t, 4) == 0 && at(&t, 999, 0) == 999,
        "appended rows");
  CHECK(rt_row_handle(&t, 0, 4) == SIRENRT_NIL && rt_row_handle(&t, 0, 5) != SIRENRT_NIL, "empty row is nil");
  rt_table_free(&t);
}

int main(void) {
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  test_good_files();
  test_bad_files();
  test_read_csv_abi();
  test_nul();
  test_append_rows();
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return check_report("test_data");
}
