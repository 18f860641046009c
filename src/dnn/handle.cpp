// dnn::Handle, TensorDesc and the shared helpers of common.hpp.
#include <algorithm>
#include <numeric>

#include "common.hpp"
#include "tessera/hal/hal.hpp"

namespace tessera::dnn {

Handle::Handle() : state_(std::make_unique<State>()) {}
Handle::Handle(hal::Stream* stream) : Handle() { state_->blas.set_stream(stream); }
Handle::~Handle() = default;
Handle::Handle(Handle&&) noexcept = default;
Handle& Handle::operator=(Handle&&) noexcept = default;

hal::Stream* Handle::stream() const { return state_->blas.stream(); }
void Handle::set_stream(hal::Stream* stream) { state_->blas.set_stream(stream); }
int Handle::num_threads() const { return state_->blas.num_threads(); }
Status Handle::set_num_threads(int n) {
  if (n < 0)
    return invalid_argument("dnn handle: num_threads = " + std::to_string(n) +
                            " must be >= 0 (0 = the process thread pool)");
  return state_->blas.set_num_threads(n);
}
void Handle::set_tune_db(std::string path) { state_->tune_db = std::move(path); }
const std::string& Handle::tune_db() const { return state_->tune_db; }
void Handle::set_use_tune_db(bool use) { state_->use_tune_db = use; }
bool Handle::use_tune_db() const { return state_->use_tune_db; }
blas::Handle& Handle::blas() { return state_->blas; }

std::string_view layout_name(Layout l) { return l == Layout::kNHWC ? "nhwc" : "nchw"; }

TensorDesc TensorDesc::make(DType dtype, std::vector<std::int64_t> dims, Layout layout) {
  TensorDesc d;
  d.dtype = dtype;
  d.dims = std::move(dims);
  const int r = d.rank();
  d.strides.assign(static_cast<std::size_t>(r), 1);
  // Order of dims from outermost to innermost.
  std::vector<int> order(static_cast<std::size_t>(r));
  std::iota(order.begin(), order.end(), 0);
  if (layout == Layout::kNHWC && r >= 3) {
    order.erase(order.begin() + 1);
    order.push_back(1);
  }
  std::int64_t s = 1;
  for (int i = r - 1; i >= 0; --i) {
    const auto dim = static_cast<std::size_t>(order[static_cast<std::size_t>(i)]);
    d.strides[dim] = s;
    s *= std::max<std::int64_t>(d.dims[dim], 1);
  }
  return d;
}

std::int64_t TensorDesc::numel() const {
  std::int64_t n = 1;
  for (auto v : dims) n *= v;
  return n;
}

bool TensorDesc::is_packed(Layout l) const {
  if (strides.size() != dims.size()) return false;
  TensorDesc p = make(dtype, dims, l);
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i] > 1 && strides[i] != p.strides[i]) return false;
  return true;
}

std::optional<Layout> TensorDesc::packed_layout() const {
  if (is_packed(Layout::kNCHW)) return Layout::kNCHW;
  if (is_packed(Layout::kNHWC)) return Layout::kNHWC;
  return std::nullopt;
}

std::int64_t TensorDesc::span() const {
  std::int64_t off = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) return 0;
    off += (dims[i] - 1) * (i < strides.size() ? strides[i] : 0);
  }
  return off + 1;
}

std::string TensorDesc::to_string() const {
  std::string s = std::string(dtype_name(dtype)) + "[" + detail::dims_string(dims) + "]";
  if (rank() >= 3 && is_packed(Layout::kNHWC) && !is_packed(Layout::kNCHW)) return s + "nhwc";
  if (is_packed(Layout::kNCHW)) return s;
  return s + "{strides " + detail::dims_string(strides) + "}";
}

namespace detail {

Status begin_call(Handle& h, const char* fn) {
  hal::Stream* stream = h.stream();
  if (stream == nullptr) return Status::ok();
  return stream->synchronize().with_context(std::string(fn) + ": waiting for the handle's stream");
}

Result<void*> workspace(Handle& h, std::size_t bytes) {
  Handle::State& s = h.state();
  if (bytes == 0) bytes = 1;
  if (!s.workspace || s.workspace->size() < bytes) {
    s.workspace.reset();
    TESSERA_ASSIGN_OR_RETURN(s.workspace, host_allocator().allocate(bytes));
  }
  return s.workspace->data();
}

std::string dims_string(const std::vector<std::int64_t>& v, char sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += sep;
    s += std::to_string(v[i]);
  }
  return s;
}

Status check_desc(const std::string& fn, const char* name, const TensorDesc& d, int min_rank,
                  int max_rank) {
  if (d.rank() < min_rank || d.rank() > max_rank)
    return invalid_argument(fn + ": " + name + " has rank " + std::to_string(d.rank()) +
                            " (dims [" + dims_string(d.dims) + "]); expected " +
                            (min_rank == max_rank ? std::to_string(min_rank)
                                                  : std::to_string(min_rank) + " to " +
                                                        std::to_string(max_rank)));
  if (d.strides.size() != d.dims.size())
    return invalid_argument(fn + ": " + name + " has " + std::to_string(d.strides.size()) +
                            " strides for " + std::to_string(d.dims.size()) + " dims");
  for (std::size_t i = 0; i < d.dims.size(); ++i) {
    if (d.dims[i] < 0)
      return invalid_argument(fn + ": " + name + " dim " + std::to_string(i) + " = " +
                              std::to_string(d.dims[i]) + " must be >= 0");
    if (d.strides[i] < 0)
      return invalid_argument(fn + ": " + name + " stride " + std::to_string(i) + " = " +
                              std::to_string(d.strides[i]) + " must be >= 0");
  }
  return Status::ok();
}

Status check_ptr(const std::string& fn, const char* name, const void* p, bool needed) {
  if (p != nullptr || !needed) return Status::ok();
  return invalid_argument(fn + ": " + name + " is null");
}

Status check_float_dtype(const std::string& fn, const char* name, const TensorDesc& d) {
  if (d.dtype == DType::kF32 || d.dtype == DType::kBF16 || d.dtype == DType::kF16)
    return Status::ok();
  return unsupported(fn + ": " + name + " has dtype " + std::string(dtype_name(d.dtype)) +
                     "; supported: f32, bf16, f16");
}

Status check_same_dims(const std::string& fn, const char* a_name, const TensorDesc& a,
                       const char* b_name, const TensorDesc& b) {
  if (a.dims == b.dims) return Status::ok();
  return invalid_argument(fn + ": " + b_name + " dims [" + dims_string(b.dims) +
                          "] differ from " + a_name + " dims [" + dims_string(a.dims) + "]");
}

Status check_same_dtype(const std::string& fn, const char* a_name, const TensorDesc& a,
                        const char* b_name, const TensorDesc& b) {
  if (a.dtype == b.dtype) return Status::ok();
  return invalid_argument(fn + ": " + b_name + " dtype " + std::string(dtype_name(b.dtype)) +
                          " differs from " + a_name + " dtype " +
                          std::string(dtype_name(a.dtype)));
}

Status refuse(std::string why) { return unsupported(std::move(why)); }

Staged stage_in(const TensorDesc& d, const void* p) {
  Staged s;
  s.desc = d;
  s.desc.dtype = DType::kF32;
  if (d.dtype == DType::kF32) {
    s.data = static_cast<const float*>(p);
    return s;
  }
  const auto n = static_cast<std::size_t>(d.span());
  s.storage.resize(n);
  if (d.dtype == DType::kBF16)
    convert_bf16_to_f32(static_cast<const bf16*>(p), s.storage.data(), n);
  else
    convert_f16_to_f32(static_cast<const f16*>(p), s.storage.data(), n);
  s.data = s.storage.data();
  return s;
}

StagedOut stage_out(const TensorDesc& d, void* p, bool read_back) {
  StagedOut s;
  s.desc = d;
  s.desc.dtype = DType::kF32;
  s.target = p;
  s.target_dtype = d.dtype;
  if (d.dtype == DType::kF32) {
    s.data = static_cast<float*>(p);
    return s;
  }
  const auto n = static_cast<std::size_t>(d.span());
  s.storage.assign(n, 0.0f);
  // Strides with gaps: read the gaps back too, so commit() leaves them as they were.
  if (read_back || d.span() != d.numel()) {
    if (d.dtype == DType::kBF16)
      convert_bf16_to_f32(static_cast<const bf16*>(p), s.storage.data(), n);
    else
      convert_f16_to_f32(static_cast<const f16*>(p), s.storage.data(), n);
  }
  s.data = s.storage.data();
  return s;
}

void StagedOut::commit() {
  if (target_dtype == DType::kF32 || storage.empty()) return;
  if (target_dtype == DType::kBF16)
    convert_f32_to_bf16(storage.data(), static_cast<bf16*>(target), storage.size());
  else
    convert_f32_to_f16(storage.data(), static_cast<f16*>(target), storage.size());
}

}  // namespace detail
}  // namespace tessera::dnn
