// Winograd convolution (placeholder until the Winograd kernels land: refuses everything).
#include "algos.hpp"

namespace tessera::dnn::conv {

Status winograd_f2x3_accepts(const Problem&) { return detail::refuse("winograd: not built yet"); }
Status winograd_f4x3_accepts(const Problem&) { return detail::refuse("winograd: not built yet"); }
Status winograd_f2x3_fwd(Handle&, const Problem&) { return unsupported("winograd: not built yet"); }
Status winograd_f4x3_fwd(Handle&, const Problem&) { return unsupported("winograd: not built yet"); }

}  // namespace tessera::dnn::conv
