/* tessera C API: sessions that run an ONNX model (the C face of tessera::exec::Session).
 *
 *   tsr_session s;
 *   tsr_session_open("model.onnx", 0, &s);
 *   const char* name = "image";
 *   tsr_session_run(s, 1, &name, &image_desc, &image_data);
 *   tsr_session_output(s, 0, &out_desc, &out_data);   (valid until the next run or destroy)
 *   tsr_session_destroy(s);
 *
 * Inputs are copied when run() starts, so the caller's buffers may change afterwards. Output
 * descriptors may have strides (views); read them with their strides. Every call returns a
 * tsr_status; tsr_last_error_message() names the problem. A session is used by one thread at
 * a time.
 *
 * This header compiles as C (C99 and later) and as C++. */
#ifndef TESSERA_C_SESSION_H_
#define TESSERA_C_SESSION_H_

#include <stdint.h>

#include "tessera/c/dnn.h"
#include "tessera/c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsr_session_s* tsr_session;

/* Imports, verifies and prepares the model; threads caps the threads a primitive uses
 * (0: the process thread pool). *session is NULL on failure. */
TSR_API tsr_status tsr_session_open(const char* model_path, int32_t threads, tsr_session* session);
/* NULL is allowed (nothing happens). */
TSR_API tsr_status tsr_session_destroy(tsr_session session);

TSR_API tsr_status tsr_session_input_count(tsr_session session, int32_t* count);
TSR_API tsr_status tsr_session_output_count(tsr_session session, int32_t* count);
/* The name of input / output i; the string lives as long as the session. */
TSR_API tsr_status tsr_session_input_name(tsr_session session, int32_t i, const char** name);
TSR_API tsr_status tsr_session_output_name(tsr_session session, int32_t i, const char** name);

/* Runs the model on n inputs: names[k] with descs[k] and the host memory data[k]. Inputs
 * with a default in the model may be left out. */
TSR_API tsr_status tsr_session_run(tsr_session session, int32_t n, const char* const* names,
                                   const tsr_tensor_desc* descs, const void* const* data);
/* Output i of the last successful run: its descriptor and host memory. */
TSR_API tsr_status tsr_session_output(tsr_session session, int32_t i, tsr_tensor_desc* desc,
                                      const void** data);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_C_SESSION_H_ */
