#include <algorithm>
#include <cstring>
#include <numeric>

#include <tessera/core/tensor.hpp>

namespace tessera {
namespace {

// Walks a multi-index over `shape` in row-major order, calling fn(linear_offset_a, ..._b)
// with element offsets for two stride sets (b may equal a).
template <typename Fn>
void walk(const Shape& shape, const Strides& sa, const Strides& sb, Fn&& fn) {
  const int rank = shape.rank();
  if (shape.numel() == 0) return;
  if (rank == 0) {
    fn(std::int64_t{0}, std::int64_t{0});
    return;
  }
  std::vector<std::int64_t> idx(static_cast<std::size_t>(rank), 0);
  std::int64_t oa = 0, ob = 0;
  const std::int64_t inner = shape[rank - 1];
  const std::int64_t ia = sa[static_cast<std::size_t>(rank - 1)];
  const std::int64_t ib = sb[static_cast<std::size_t>(rank - 1)];
  while (true) {
    for (std::int64_t i = 0; i < inner; ++i) fn(oa + i * ia, ob + i * ib);
    int d = rank - 2;
    for (; d >= 0; --d) {
      auto du = static_cast<std::size_t>(d);
      if (++idx[du] < shape[d]) {
        oa += sa[du];
        ob += sb[du];
        break;
      }
      oa -= sa[du] * (shape[d] - 1);
      ob -= sb[du] * (shape[d] - 1);
      idx[du] = 0;
    }
    if (d < 0) return;
  }
}

// Lowest and one-past-highest byte addressed, relative to the element-0 address.
std::pair<std::int64_t, std::int64_t> byte_extent(const Shape& shape, const Strides& strides,
                                                  std::size_t esize) {
  if (shape.numel() == 0) return {0, 0};
  std::int64_t lo = 0, hi = 0;
  for (int d = 0; d < shape.rank(); ++d) {
    std::int64_t span = strides[static_cast<std::size_t>(d)] * (shape[d] - 1);
    (span < 0 ? lo : hi) += span;
  }
  auto es = static_cast<std::int64_t>(esize);
  return {lo * es, (hi + 1) * es};
}

}  // namespace

Result<Tensor> Tensor::empty(const Shape& shape, DType dtype, Allocator& alloc) {
  std::size_t bytes = static_cast<std::size_t>(shape.numel()) * dtype_size(dtype);
  if (shape.numel() != 0 && bytes / dtype_size(dtype) != static_cast<std::size_t>(shape.numel()))
    return out_of_memory("tensor of shape " + shape.to_string() + " is too large");
  TESSERA_ASSIGN_OR_RETURN(auto buffer, alloc.allocate(bytes));
  return Tensor(std::move(buffer), 0, dtype, shape, contiguous_strides(shape));
}

Result<Tensor> Tensor::zeros(const Shape& shape, DType dtype, Allocator& alloc) {
  TESSERA_ASSIGN_OR_RETURN(Tensor t, empty(shape, dtype, alloc));
  if (!t.device().is_host())
    return unsupported("Tensor::zeros on " + tessera::to_string(t.device()) + " needs a stream");
  if (t.nbytes() != 0) std::memset(t.data(), 0, t.nbytes());
  return t;
}

Result<Tensor> Tensor::view_of(std::shared_ptr<Buffer> buffer, std::size_t offset_bytes,
                               DType dtype, const Shape& shape, const Strides& strides) {
  if (!buffer) return invalid_argument("view_of: null buffer");
  if (static_cast<int>(strides.size()) != shape.rank())
    return invalid_argument("view_of: " + std::to_string(strides.size()) + " strides for rank " +
                            std::to_string(shape.rank()));
  // Overflow-checked extent: |stride| * (dim - 1) summed over dims.
  std::int64_t lo = 0, hi = 0;
  if (shape.numel() != 0) {
    for (int d = 0; d < shape.rank(); ++d) {
      std::int64_t span;
      if (__builtin_mul_overflow(strides[static_cast<std::size_t>(d)], shape[d] - 1, &span) ||
          __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi))
        return invalid_argument("view_of: strides " + tessera::to_string(strides) + " overflow");
    }
    auto es = static_cast<std::int64_t>(dtype_size(dtype));
    if (__builtin_mul_overflow(lo, es, &lo) || __builtin_mul_overflow(hi + 1, es, &hi))
      return invalid_argument("view_of: strides " + tessera::to_string(strides) + " overflow");
  }
  auto off = static_cast<std::int64_t>(offset_bytes);
  if (offset_bytes > buffer->size() || off + lo < 0 ||
      off + hi > static_cast<std::int64_t>(buffer->size()))
    return invalid_argument("view_of: shape " + shape.to_string() + " with strides " +
                            tessera::to_string(strides) + " at byte offset " +
                            std::to_string(offset_bytes) + " reaches outside the " +
                            std::to_string(buffer->size()) + "-byte buffer");
  return Tensor(std::move(buffer), offset_bytes, dtype, shape, strides);
}

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;  // no element is addressed: any strides will do
  std::int64_t expected = 1;
  for (int d = rank() - 1; d >= 0; --d) {
    if (shape_[d] == 1) continue;
    if (strides_[static_cast<std::size_t>(d)] != expected) return false;
    expected *= shape_[d];
  }
  return true;
}

void* Tensor::data() const {
  TESSERA_ASSERT(buffer_ != nullptr, "Tensor::data on an undefined tensor");
  TESSERA_ASSERT(buffer_->device().is_host(), "Tensor::data on a device buffer");
  if (buffer_->data() == nullptr) return nullptr;
  return static_cast<char*>(buffer_->data()) + offset_bytes_;
}

std::int64_t Tensor::element_offset(std::initializer_list<std::int64_t> index) const {
  TESSERA_ASSERT(static_cast<int>(index.size()) == rank(), "Tensor::at: wrong number of indices");
  std::int64_t off = 0;
  int d = 0;
  for (std::int64_t i : index) {
    TESSERA_ASSERT(i >= 0 && i < shape_[d], "Tensor::at: index out of range");
    off += i * strides_[static_cast<std::size_t>(d++)];
  }
  return off;
}

Status Tensor::check_host(const char* what) const {
  if (!defined()) return invalid_argument(std::string(what) + ": undefined tensor");
  if (!device().is_host())
    return unsupported(std::string(what) + ": tensor is on " + tessera::to_string(device()));
  return Status::ok();
}

Result<Tensor> Tensor::slice(int dim, std::int64_t start, std::int64_t stop,
                             std::int64_t step) const {
  if (dim < 0 || dim >= rank())
    return invalid_argument("slice: dim " + std::to_string(dim) + " out of range for rank " +
                            std::to_string(rank()));
  const std::int64_t n = shape_[dim];
  std::int64_t count;
  if (step > 0) {
    if (start < 0 || start > n || stop < start || stop > n)
      return invalid_argument("slice: range [" + std::to_string(start) + ", " +
                              std::to_string(stop) + ") invalid for dim " + std::to_string(dim) +
                              " of size " + std::to_string(n));
    count = (stop - start + step - 1) / step;
  } else if (step < 0) {
    if (start < 0 || start >= n || stop < -1 || stop > start)
      return invalid_argument("slice: range [" + std::to_string(start) + " down to " +
                              std::to_string(stop) + ") invalid for dim " + std::to_string(dim) +
                              " of size " + std::to_string(n));
    count = (start - stop + (-step) - 1) / (-step);
  } else {
    return invalid_argument("slice: step must not be 0");
  }
  Shape shape = shape_;
  Strides strides = strides_;
  auto du = static_cast<std::size_t>(dim);
  std::int64_t offset = static_cast<std::int64_t>(offset_bytes_);
  if (count > 0) offset += start * strides[du] * static_cast<std::int64_t>(element_size());
  shape[dim] = count;
  strides[du] *= step;
  return Tensor(buffer_, static_cast<std::size_t>(offset), dtype_, shape, strides);
}

Result<Tensor> Tensor::select(int dim, std::int64_t index) const {
  if (dim < 0 || dim >= rank())
    return invalid_argument("select: dim " + std::to_string(dim) + " out of range for rank " +
                            std::to_string(rank()));
  if (index < 0 || index >= shape_[dim])
    return invalid_argument("select: index " + std::to_string(index) + " out of range for dim " +
                            std::to_string(dim) + " of size " + std::to_string(shape_[dim]));
  auto du = static_cast<std::size_t>(dim);
  std::size_t offset =
      offset_bytes_ + static_cast<std::size_t>(index * strides_[du]) * element_size();
  std::vector<std::int64_t> dims = shape_.dims();
  Strides strides = strides_;
  dims.erase(dims.begin() + dim);
  strides.erase(strides.begin() + dim);
  return Tensor(buffer_, offset, dtype_, Shape(std::move(dims)), std::move(strides));
}

Result<Tensor> Tensor::permute(const std::vector<int>& perm) const {
  if (static_cast<int>(perm.size()) != rank())
    return invalid_argument("permute: " + std::to_string(perm.size()) + " axes for rank " +
                            std::to_string(rank()));
  std::vector<bool> seen(perm.size(), false);
  std::vector<std::int64_t> dims(perm.size());
  Strides strides(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) {
    int p = perm[i];
    if (p < 0 || p >= rank() || seen[static_cast<std::size_t>(p)])
      return invalid_argument("permute: axes are not a permutation of 0.." +
                              std::to_string(rank() - 1));
    seen[static_cast<std::size_t>(p)] = true;
    dims[i] = shape_[p];
    strides[i] = strides_[static_cast<std::size_t>(p)];
  }
  return Tensor(buffer_, offset_bytes_, dtype_, Shape(std::move(dims)), std::move(strides));
}

Result<Tensor> Tensor::transpose(int a, int b) const {
  std::vector<int> perm(static_cast<std::size_t>(rank()));
  std::iota(perm.begin(), perm.end(), 0);
  if (a < 0 || a >= rank() || b < 0 || b >= rank())
    return invalid_argument("transpose: axes out of range for rank " + std::to_string(rank()));
  std::swap(perm[static_cast<std::size_t>(a)], perm[static_cast<std::size_t>(b)]);
  return permute(perm);
}

Result<Tensor> Tensor::reshape(const Shape& shape) const {
  if (shape.numel() != numel())
    return invalid_argument("reshape: " + shape_.to_string() + " (" + std::to_string(numel()) +
                            " elements) cannot become " + shape.to_string());
  if (!is_contiguous())
    return unsupported("reshape: the view is not contiguous; call contiguous() first");
  return Tensor(buffer_, offset_bytes_, dtype_, shape, contiguous_strides(shape));
}

Result<Tensor> Tensor::contiguous() const {
  TESSERA_RETURN_IF_ERROR(check_host("contiguous"));
  if (is_contiguous()) return *this;
  return clone();
}

Result<Tensor> Tensor::clone() const {
  TESSERA_RETURN_IF_ERROR(check_host("clone"));
  TESSERA_ASSIGN_OR_RETURN(Tensor out, empty(shape_, dtype_));
  TESSERA_RETURN_IF_ERROR(out.copy_from(*this));
  return out;
}

Status Tensor::copy_from(const Tensor& src) const {
  TESSERA_RETURN_IF_ERROR(check_host("copy_from"));
  TESSERA_RETURN_IF_ERROR(src.check_host("copy_from"));
  if (src.dtype_ != dtype_ || src.shape_ != shape_)
    return invalid_argument("copy_from: source " + src.to_string() + " does not match " +
                            to_string());
  if (numel() == 0) return Status::ok();
  if (src.buffer_ == buffer_) {
    auto [dlo, dhi] = byte_extent(shape_, strides_, element_size());
    auto [slo, shi] = byte_extent(src.shape_, src.strides_, element_size());
    auto d0 = static_cast<std::int64_t>(offset_bytes_),
         s0 = static_cast<std::int64_t>(src.offset_bytes_);
    if (d0 == s0 && strides_ == src.strides_) return Status::ok();
    if (d0 + dlo < s0 + shi && s0 + slo < d0 + dhi)
      return invalid_argument("copy_from: source and destination overlap");
  }
  const std::size_t es = element_size();
  auto* d = static_cast<char*>(data());
  auto* s = static_cast<const char*>(src.data());
  if (is_contiguous() && src.is_contiguous()) {
    std::memcpy(d, s, nbytes());
    return Status::ok();
  }
  auto ses = static_cast<std::int64_t>(es);
  walk(shape_, strides_, src.strides_,
       [&](std::int64_t od, std::int64_t os) { std::memcpy(d + od * ses, s + os * ses, es); });
  return Status::ok();
}

std::string Tensor::to_string() const {
  if (!defined()) return "Tensor(undefined)";
  return "Tensor(" + std::string(dtype_name(dtype_)) + ", " + shape_.to_string() + ", strides " +
         tessera::to_string(strides_) + ", " + tessera::to_string(device()) + ")";
}

void for_each_element(const Tensor& t, const std::function<void(void*)>& fn) {
  auto* base = static_cast<char*>(t.data());
  auto es = static_cast<std::int64_t>(t.element_size());
  walk(t.shape(), t.strides(), t.strides(),
       [&](std::int64_t off, std::int64_t) { fn(base + off * es); });
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.numel() == 0) return true;
  auto* pa = static_cast<const char*>(a.data());
  auto* pb = static_cast<const char*>(b.data());
  auto es = static_cast<std::int64_t>(a.element_size());
  bool equal = true;
  walk(a.shape(), a.strides(), b.strides(), [&](std::int64_t oa, std::int64_t ob) {
    if (equal && std::memcmp(pa + oa * es, pb + ob * es, static_cast<std::size_t>(es)) != 0)
      equal = false;
  });
  return equal;
}

}  // namespace tessera
