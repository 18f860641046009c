// Direct convolution (placeholder: refuses until the register-blocked kernel lands).
#include "algos.hpp"

namespace tessera::dnn::conv {

Status direct_accepts(const Problem&) { return detail::refuse("direct: not built yet"); }
Status direct_fwd(Handle&, const Problem&) { return unsupported("direct: not built yet"); }

}  // namespace tessera::dnn::conv
