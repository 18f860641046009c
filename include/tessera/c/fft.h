/* tessera FFT, C interface (rocFFT / FFTW-style plans) over the C++ API in
 * include/tessera/fft.hpp, whose contracts apply unchanged.
 *
 * - A tsr_fft_desc is a plain struct describing the transform; tsr_fft_desc_init fills one
 *   with the defaults (packed layouts, batch 1, scale 1, estimate planning, the process thread
 *   pool). Lengths are row-major: lengths[rank - 1] varies fastest. For r2c and c2r they are
 *   the real (logical) lengths; the complex side holds lengths[rank - 1] / 2 + 1 elements
 *   along the last dimension.
 * - Layouts count elements of the side's own type: tsr_float_complex / tsr_double_complex
 *   ({re, im} pairs, see tessera/c/blas.h) on a complex side, float / double on a real side.
 *   Strides whose first `rank` entries are all 0 mean packed row-major; a distance of 0 means
 *   the packed size of one transform. In-place real transforms default to FFTW's padded real
 *   layout (rows of 2 * (lengths[rank - 1] / 2 + 1) reals).
 * - Forward is X[k] = sum_n x[n] exp(-2 pi i n k / N); inverse uses exp(+2 pi i n k / N) and is
 *   unnormalised (like FFTW and rocFFT): set scale = 1.0 / N for a normalised inverse.
 * - tsr_fft_plan_create does every piece of work that does not depend on the data
 *   (validation, factorisation, twiddles; timing of candidates in MEASURE mode, whose winner is
 *   stored in the tuning database TESSERA_TUNE_DB, else $XDG_CACHE_HOME/tessera/tune.sqlite).
 *   tsr_fft_execute may then run one plan from several threads at once on different data.
 *   Results are bitwise identical for any thread count.
 * - Every function returns a tsr_status. A null pointer, an enum value outside its range, a
 *   rank outside 1..3, or any value the C++ plan rejects (lengths or batch < 1, overlapping
 *   in-place strides, a non-finite scale, ...) returns TSR_STATUS_INVALID_ARGUMENT (or
 *   TSR_STATUS_UNSUPPORTED for a valid description this build cannot serve), writes nothing,
 *   and leaves a message naming the field for tsr_last_error_message(), e.g.
 *   "tsr_fft_plan_create: desc->rank = 4 must be 1, 2 or 3".
 *
 * This header compiles as C (C99 and later) and as C++. */
#ifndef TESSERA_C_FFT_H_
#define TESSERA_C_FFT_H_

#include <stddef.h>
#include <stdint.h>

#include "tessera/c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each enum has a *_INT_RANGE_ enumerator equal to INT_MIN that is never a valid argument (see
 * tessera/c/blas.h): a wrong value from a caller is reported, never undefined. The values are
 * those of the C++ enums. */
typedef enum tsr_fft_kind {
  TSR_FFT_C2C = 0, /* complex to complex */
  TSR_FFT_R2C = 1, /* real to Hermitian half spectrum (forward) */
  TSR_FFT_C2R = 2, /* Hermitian half spectrum to real (inverse) */
  TSR_FFT_KIND_INT_RANGE_ = -0x7fffffff - 1
} tsr_fft_kind;
typedef enum tsr_fft_precision {
  TSR_FFT_SINGLE = 0, /* float, tsr_float_complex */
  TSR_FFT_DOUBLE = 1, /* double, tsr_double_complex */
  TSR_FFT_PRECISION_INT_RANGE_ = -0x7fffffff - 1
} tsr_fft_precision;
/* The sign of the exponent. r2c must be FORWARD and c2r INVERSE. */
typedef enum tsr_fft_direction {
  TSR_FFT_FORWARD = -1,
  TSR_FFT_INVERSE = 1,
  TSR_FFT_DIRECTION_INT_RANGE_ = -0x7fffffff - 1
} tsr_fft_direction;
/* ESTIMATE: the cost model picks at once (or the tuning database's entry, if it has one).
 * MEASURE: candidates are timed and the winner is stored in the tuning database. */
typedef enum tsr_fft_planning {
  TSR_FFT_PLANNING_ESTIMATE = 0,
  TSR_FFT_PLANNING_MEASURE = 1,
  TSR_FFT_PLANNING_INT_RANGE_ = -0x7fffffff - 1
} tsr_fft_planning;

#define TSR_FFT_MAX_RANK 3

/* Entries of lengths and strides from `rank` on are ignored. */
typedef struct tsr_fft_desc {
  tsr_fft_kind kind;
  tsr_fft_precision precision;
  tsr_fft_direction direction;
  int32_t rank;                          /* 1 to 3 */
  int64_t lengths[TSR_FFT_MAX_RANK];     /* each >= 1 */
  int64_t batch;                         /* transforms per execute, >= 1 */
  int64_t in_strides[TSR_FFT_MAX_RANK];  /* all 0: packed */
  int64_t in_distance;                   /* between batch members; 0: packed */
  int64_t out_strides[TSR_FFT_MAX_RANK]; /* all 0: packed */
  int64_t out_distance;                  /* 0: packed */
  int32_t in_place;                      /* nonzero: tsr_fft_execute(plan, data, data) */
  double scale;                          /* multiplies every output element; finite */
  tsr_fft_planning planning;
  int32_t threads; /* 0: the process thread pool; else at most this many threads */
} tsr_fft_desc;

/* A description of `kind` and `precision` over lengths[0..rank) (rank 1 to 3) with the
 * defaults: direction FORWARD (INVERSE for C2R), batch 1, packed out-of-place layouts,
 * scale 1, ESTIMATE planning, threads 0. The lengths are checked by tsr_fft_plan_create. */
TSR_API tsr_status tsr_fft_desc_init(tsr_fft_kind kind, tsr_fft_precision precision, int32_t rank,
                                     const int64_t* lengths, tsr_fft_desc* desc);

typedef struct tsr_fft_plan_s* tsr_fft_plan;

/* Plans *desc; on success *plan holds a plan to release with tsr_fft_plan_destroy. */
TSR_API tsr_status tsr_fft_plan_create(tsr_fft_plan* plan, const tsr_fft_desc* desc);
/* A null plan is accepted and ignored. */
TSR_API tsr_status tsr_fft_plan_destroy(tsr_fft_plan plan);

/* Runs the transform: `in` and `out` point at element 0 of batch member 0 (in == out for an
 * in-place plan; an out-of-place plan refuses overlapping spans and never modifies `in`).
 * Thread-safe: one plan may run on several threads at once with different data. */
TSR_API tsr_status tsr_fft_execute(tsr_fft_plan plan, const void* in, void* out);

/* Elements each side spans (last element + 1), in the side's own type: the smallest arrays
 * tsr_fft_execute may be given. */
TSR_API tsr_status tsr_fft_plan_get_spans(tsr_fft_plan plan, int64_t* input_span,
                                          int64_t* output_span);

/* The plan's description, one line per dimension: the algorithm and factorisation, its
 * instruction set and where the choice came from, e.g.
 * "c2c single n=1000: stockham 8x5x5x5 avx512 (estimate)". Copies it into buffer[0..capacity)
 * cut to fit and NUL-terminated (buffer may be NULL when capacity is 0); *length (if not NULL)
 * receives the full length without the NUL, so a caller can size the buffer. */
TSR_API tsr_status tsr_fft_plan_describe(tsr_fft_plan plan, char* buffer, size_t capacity,
                                         size_t* length);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_C_FFT_H_ */
