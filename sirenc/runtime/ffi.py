"""The process-wide cffi interface (ABI mode) to the C runtime and to compiled models.

    >>> from sirenc.runtime.ffi import ffi, runtime_lib
    >>> lib = runtime_lib()
    >>> out = ffi.new("double[]", 3)
    >>> params = ffi.new("double[]", [0.0, 1.0])        # gaussian(mean 0, variance 1)
    >>> lib.sirenrt_sample_many(lib.SIRENRT_FAM_GAUSSIAN, params, 3, 42, out)
    0

There is exactly one ``FFI`` per process (TOOLCHAIN P15: parsing the declarations costs
about 20 ms, and cdata from different FFIs do not mix).  Its declarations mirror
``runtime_c/include/sirenrt.h``; ``tests/unit/test_runtime_ffi.py`` checks that every
exported function of the header is declared here.  A compiled ``model.so`` is opened
with the same ``ffi`` (``ffi.dlopen(path)``) and exposes the ``sirenc_*`` functions.
"""

from __future__ import annotations

import threading

import cffi

__all__ = ["ffi", "runtime_lib", "last_error", "ABI_VERSION", "FAMILIES"]

ABI_VERSION = 2

# Family numbers of sirenrt_sample_many (sirenrt.h).
FAMILIES = (
    "gaussian", "beta", "bernoulli", "binomial", "beta_binomial", "negative_binomial",
    "exponential", "gamma", "poisson", "delta", "categorical", "uniform_int", "student_t",
)

CDEF = """
typedef struct sirenrt_ctx sirenrt_ctx;
typedef struct sirenrt_filter sirenrt_filter;
enum { SIRENRT_NIL = -1, SIRENRT_END = -2, SIRENRT_NEED = -3 };
enum { SIRENRT_FINISHED = 0, SIRENRT_AT_RESAMPLE = 1, SIRENRT_NEED_ROW = 2 };
enum { SIRENRT_SYSTEMATIC = 0, SIRENRT_MULTINOMIAL = 1, SIRENRT_STRATIFIED = 2, SIRENRT_RESIDUAL = 3 };
enum {
  SIRENRT_FAM_GAUSSIAN = 0, SIRENRT_FAM_BETA, SIRENRT_FAM_BERNOULLI, SIRENRT_FAM_BINOMIAL,
  SIRENRT_FAM_BETA_BINOMIAL, SIRENRT_FAM_NEGATIVE_BINOMIAL, SIRENRT_FAM_EXPONENTIAL, SIRENRT_FAM_GAMMA,
  SIRENRT_FAM_POISSON, SIRENRT_FAM_DELTA, SIRENRT_FAM_CATEGORICAL, SIRENRT_FAM_UNIFORM_INT,
  SIRENRT_FAM_STUDENT_T, SIRENRT_N_FAMILIES
};

typedef int32_t (*sirenrt_resume_fn)(sirenrt_ctx *ctx, uint8_t *frame, double *log_weight);

typedef struct sirenrt_site {
  const char *file;
  int32_t line, col, end_col;
  const char *text;
} sirenrt_site;

typedef struct sirenrt_root {
  int32_t pc;
  uint32_t offset;
  const char *type;
} sirenrt_root;

typedef struct sirenrt_model {
  uint32_t abi_version;
  const char *name, *method;
  const char *plan;
  const char *result_type;
  uint32_t frame_size;
  uint32_t result_offset;
  sirenrt_resume_fn resume;
  int32_t streamable;
  const char *not_streamable_reason;
  int32_t n_files;
  const char *const *files;
  int32_t n_sites;
  const sirenrt_site *sites;
  int32_t n_roots;
  const sirenrt_root *roots;
} sirenrt_model;

typedef struct sirenrt_options {
  int32_t resampler;
  double ess_threshold;
  int32_t threads;
} sirenrt_options;

double sirenrt_std_normal(sirenrt_ctx *ctx);
double sirenrt_sample_gaussian(sirenrt_ctx *ctx, double mu, double var, int32_t site);
double sirenrt_sample_beta(sirenrt_ctx *ctx, double a, double b, int32_t site);
double sirenrt_sample_bernoulli(sirenrt_ctx *ctx, double p, int32_t site);
double sirenrt_sample_binomial(sirenrt_ctx *ctx, double n, double p, int32_t site);
double sirenrt_sample_beta_binomial(sirenrt_ctx *ctx, double n, double a, double b, int32_t site);
double sirenrt_sample_negative_binomial(sirenrt_ctx *ctx, double n, double p, int32_t site);
double sirenrt_sample_exponential(sirenrt_ctx *ctx, double rate, int32_t site);
double sirenrt_sample_gamma(sirenrt_ctx *ctx, double shape, double rate, int32_t site);
double sirenrt_sample_poisson(sirenrt_ctx *ctx, double lambda, int32_t site);
double sirenrt_sample_delta(sirenrt_ctx *ctx, double v, int32_t site);
double sirenrt_sample_categorical(sirenrt_ctx *ctx, double lo, double hi, int64_t probs, int32_t site);
double sirenrt_sample_uniform_int(sirenrt_ctx *ctx, double a, double b, int32_t site);
double sirenrt_sample_student_t(sirenrt_ctx *ctx, double mu, double tau2, double nu, int32_t site);

void sirenrt_add_log_weight(sirenrt_ctx *ctx, double lp, int32_t site);
void sirenrt_observe_gaussian(sirenrt_ctx *ctx, double mu, double var, double x, int32_t site);
void sirenrt_observe_beta(sirenrt_ctx *ctx, double a, double b, double x, int32_t site);
void sirenrt_observe_bernoulli(sirenrt_ctx *ctx, double p, double x, int32_t site);
void sirenrt_observe_binomial(sirenrt_ctx *ctx, double n, double p, double x, int32_t site);
void sirenrt_observe_beta_binomial(sirenrt_ctx *ctx, double n, double a, double b, double x, int32_t site);
void sirenrt_observe_negative_binomial(sirenrt_ctx *ctx, double n, double p, double x, int32_t site);
void sirenrt_observe_exponential(sirenrt_ctx *ctx, double rate, double x, int32_t site);
void sirenrt_observe_gamma(sirenrt_ctx *ctx, double shape, double rate, double x, int32_t site);
void sirenrt_observe_poisson(sirenrt_ctx *ctx, double lambda, double x, int32_t site);
void sirenrt_observe_delta(sirenrt_ctx *ctx, double v, double x, int32_t site);
void sirenrt_observe_categorical(sirenrt_ctx *ctx, double lo, double hi, int64_t probs, double x, int32_t site);
void sirenrt_observe_uniform_int(sirenrt_ctx *ctx, double a, double b, double x, int32_t site);
void sirenrt_observe_student_t(sirenrt_ctx *ctx, double mu, double tau2, double nu, double x, int32_t site);

double sirenrt_logpdf_gaussian(double mu, double var, double x);
double sirenrt_logpdf_beta(double a, double b, double x);
double sirenrt_logpdf_bernoulli(double p, double x);
double sirenrt_logpdf_binomial(double n, double p, double x);
double sirenrt_logpdf_beta_binomial(double n, double a, double b, double x);
double sirenrt_logpdf_negative_binomial(double n, double p, double x);
double sirenrt_logpdf_exponential(double rate, double x);
double sirenrt_logpdf_gamma(double shape, double rate, double x);
double sirenrt_logpdf_poisson(double lambda, double x);
double sirenrt_logpdf_delta(double v, double x);
double sirenrt_logpdf_categorical(double lo, double hi, const double *probs, int64_t n, double x);
double sirenrt_logpdf_uniform_int(double a, double b, double x);
double sirenrt_logpdf_student_t(double mu, double tau2, double nu, double x);

double sirenrt_mean_gaussian(double mu, double var);
double sirenrt_mean_beta(double a, double b);
double sirenrt_mean_bernoulli(double p);
double sirenrt_mean_binomial(double n, double p);
double sirenrt_mean_beta_binomial(double n, double a, double b);
double sirenrt_mean_negative_binomial(double n, double p);
double sirenrt_mean_exponential(double rate);
double sirenrt_mean_gamma(double shape, double rate);
double sirenrt_mean_poisson(double lambda);
double sirenrt_mean_delta(double v);
double sirenrt_mean_categorical(double lo, double hi, const double *probs, int64_t n);
double sirenrt_mean_uniform_int(double a, double b);
double sirenrt_mean_student_t(double mu, double tau2, double nu);

int64_t sirenrt_list_cons(sirenrt_ctx *ctx, int64_t tail, int32_t nwords);
void sirenrt_list_set(sirenrt_ctx *ctx, int64_t cell, int32_t i, int64_t word);
int64_t sirenrt_list_get(sirenrt_ctx *ctx, int64_t list, int32_t i, int32_t site);
int64_t sirenrt_list_tl(sirenrt_ctx *ctx, int64_t list, int32_t site);
double sirenrt_list_len(sirenrt_ctx *ctx, int64_t list);
int64_t sirenrt_list_rev(sirenrt_ctx *ctx, int64_t list, int32_t nwords);
int64_t sirenrt_list_range(sirenrt_ctx *ctx, double a, double b, int32_t site);

int64_t sirenrt_file(sirenrt_ctx *ctx, int32_t file_id, int32_t site);
int64_t sirenrt_stream_row(sirenrt_ctx *ctx, int64_t index);

sirenrt_filter *sirenrt_filter_new(const sirenrt_model *m, int64_t n_particles, uint64_t seed,
                                   const sirenrt_options *opts);
void sirenrt_filter_free(sirenrt_filter *f);
int32_t sirenrt_filter_run(sirenrt_filter *f, const double *rows, int64_t n_rows, int64_t n_cols);
int32_t sirenrt_filter_step(sirenrt_filter *f, const double *row, int64_t n_cols);
int32_t sirenrt_filter_estimate(sirenrt_filter *f, double *out, int64_t cap, int64_t *n_out);
double sirenrt_filter_log_evidence(const sirenrt_filter *f);
double sirenrt_filter_ess(const sirenrt_filter *f);
const char *sirenrt_filter_error(const sirenrt_filter *f);
int64_t sirenrt_filter_memory_words(const sirenrt_filter *f);
const char *sirenrt_last_error(void);

int32_t sirenrt_sample_many(int32_t family, const double *params, int64_t n, uint64_t seed, double *out);

const sirenrt_model *sirenc_info(void);
sirenrt_filter *sirenc_new(int64_t n_particles, uint64_t seed, const sirenrt_options *opts);
void sirenc_free(sirenrt_filter *f);
int32_t sirenc_run(sirenrt_filter *f, const double *rows, int64_t n_rows, int64_t n_cols);
int32_t sirenc_step(sirenrt_filter *f, const double *row, int64_t n_cols);
int32_t sirenc_estimate(sirenrt_filter *f, double *out, int64_t cap, int64_t *n_out);
double sirenc_log_evidence(const sirenrt_filter *f);
double sirenc_ess(const sirenrt_filter *f);
const char *sirenc_error(const sirenrt_filter *f);
"""

ffi = cffi.FFI()
ffi.cdef(CDEF)

_lock = threading.Lock()
_lib = None


def runtime_lib():
    """``libsirenrt.so``, opened once per process (also re-entrant from several threads)."""
    global _lib
    if _lib is None:
        with _lock:
            if _lib is None:
                from sirenc.runtime import shared_library_path

                _lib = ffi.dlopen(str(shared_library_path()))
    return _lib


def last_error() -> str:
    """The runtime's thread-local last error (why a call that returns no filter failed)."""
    return ffi.string(runtime_lib().sirenrt_last_error()).decode("utf-8", "replace")
