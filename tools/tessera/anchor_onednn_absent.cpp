// The oneDNN anchor of a build without oneDNN's header (dnnl.h, Debian's libdnnl-dev): the
// same interface, reporting why there is no anchor. `tessera bench dnn` then shows n/a.
#include "anchor_onednn.hpp"

namespace tessera::cli::onednn {
namespace {

const char kWhy[] =
    "this tessera was built without oneDNN's header dnnl.h (install libdnnl-dev and rebuild)";

}  // namespace

Tensor tensor(const dnn::TensorDesc& d, const void* data) {
  return {d.dtype, d.dims, d.strides, const_cast<void*>(data)};
}

const Info* open(std::string* why) {
  if (why != nullptr) *why = kWhy;
  return nullptr;
}

void set_threads(int) {}

Result<PrimitivePtr> make_conv(const ConvSpec&) {
  return unsupported(kWhy);
}
Result<PrimitivePtr> make_pool(const PoolSpec&) {
  return unsupported(kWhy);
}
Result<PrimitivePtr> make_eltwise(const EltwiseSpec&) {
  return unsupported(kWhy);
}
Result<PrimitivePtr> make_softmax(const SoftmaxSpec&) {
  return unsupported(kWhy);
}
Result<PrimitivePtr> make_norm(const NormSpec&) {
  return unsupported(kWhy);
}
Result<PrimitivePtr> make_lrn(const LrnSpec&) {
  return unsupported(kWhy);
}

}  // namespace tessera::cli::onednn
