#include <tessera/core/shape.hpp>

namespace tessera {
namespace {
constexpr std::int64_t kMaxElements = std::int64_t{1} << 62;

// The element count, or -1 when a dim is negative or the count exceeds kMaxElements.
std::int64_t checked_numel(const std::vector<std::int64_t>& dims) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) {
    if (d < 0) return -1;
    if (d == 0) n = 0;
  }
  if (n == 0) return 0;
  for (std::int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxElements) return -1;
  return n;
}
}  // namespace

Result<Shape> Shape::make(std::vector<std::int64_t> dims) {
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0)
      return invalid_argument("dimension " + std::to_string(i) + " is negative (" +
                              std::to_string(dims[i]) + ")");
  if (checked_numel(dims) < 0) return invalid_argument("shape has more than 2^62 elements");
  Shape s;
  s.dims_ = std::move(dims);
  return s;
}

void Shape::check() const {
  TESSERA_ASSERT(checked_numel(dims_) >= 0, "Shape: negative dimension or too many elements");
}

std::int64_t Shape::numel() const {
  // Zero first: a zero dim after huge ones must not overflow the product.
  for (std::int64_t d : dims_)
    if (d == 0) return 0;
  std::int64_t n = 1;
  for (std::int64_t d : dims_) n *= d;
  return n;
}

std::string Shape::to_string() const {
  return tessera::to_string(dims_);
}

Strides contiguous_strides(const Shape& shape) {
  Strides s(static_cast<std::size_t>(shape.rank()));
  std::int64_t stride = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    s[static_cast<std::size_t>(i)] = stride;
    stride *= std::max<std::int64_t>(shape[i], 1);
  }
  return s;
}

std::string to_string(const Strides& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

}  // namespace tessera
