// Depthwise convolution (placeholder: refuses until the kernel lands).
#include "algos.hpp"

namespace tessera::dnn::conv {

Status depthwise_accepts(const Problem&) { return detail::refuse("depthwise: not built yet"); }
Status depthwise_fwd(Handle&, const Problem&) { return unsupported("depthwise: not built yet"); }
Status depthwise_bwd_weights(Handle&, const Problem&) { return unsupported("depthwise: not built yet"); }

}  // namespace tessera::dnn::conv
