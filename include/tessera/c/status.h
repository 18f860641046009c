/* tessera C API: status codes and error messages.
 *
 * Every C entry point returns a tsr_status. When a call fails, a message naming the problem
 * (for example "tsr_blas_sgemm: lda = 3 must be >= max(1, m) = 5") is kept per thread and
 * read with tsr_last_error_message(). No C++ exception ever crosses the C boundary.
 *
 * This header compiles as C (C99 and later) and as C++. */
#ifndef TESSERA_C_STATUS_H_
#define TESSERA_C_STATUS_H_

/* Marks the functions exported by libtessera.so. */
#define TSR_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* The same values as tessera::StatusCode (include/tessera/core/status.hpp). */
typedef enum tsr_status {
  TSR_STATUS_OK = 0,
  TSR_STATUS_INVALID_ARGUMENT = 1, /* a value outside the contract; nothing was written */
  TSR_STATUS_UNSUPPORTED = 2,      /* a valid request this build or device cannot serve */
  TSR_STATUS_OUT_OF_MEMORY = 3,
  TSR_STATUS_NOT_FOUND = 4,
  TSR_STATUS_PARSE_ERROR = 5,
  TSR_STATUS_IO_ERROR = 6,
  TSR_STATUS_UNAVAILABLE = 7,
  TSR_STATUS_INTERNAL = 8,                /* a bug in tessera surfaced as a value */
  TSR_STATUS_INT_RANGE_ = -0x7fffffff - 1 /* never returned: makes every int a tsr_status */
} tsr_status;

/* The message of the last call on this thread that returned something other than
 * TSR_STATUS_OK; "" when none has failed. Successful calls leave it unchanged. The pointer
 * stays valid until the next failing call on this thread. */
TSR_API const char* tsr_last_error_message(void);

/* A short name for a status: "ok", "invalid argument", ...; "unknown status" for a value
 * outside the enum. The string is static. */
TSR_API const char* tsr_status_name(tsr_status status);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_C_STATUS_H_ */
