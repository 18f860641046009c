// Shapes and strides. Dimensions are int64 and non-negative; strides count elements (not
// bytes) and may be negative or zero (broadcast views).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <tessera/core/status.hpp>

namespace tessera {

using Strides = std::vector<std::int64_t>;

class Shape {
 public:
  Shape() = default;  // rank 0: a scalar with one element
  Shape(std::initializer_list<std::int64_t> dims) : dims_(dims) { check(); }
  explicit Shape(std::vector<std::int64_t> dims) : dims_(std::move(dims)) { check(); }
  // Validates user-supplied dims: negative dims or an element count above 2^62 are errors.
  static Result<Shape> make(std::vector<std::int64_t> dims);

  int rank() const { return static_cast<int>(dims_.size()); }
  std::int64_t operator[](int i) const { return dims_[static_cast<std::size_t>(i)]; }
  std::int64_t& operator[](int i) { return dims_[static_cast<std::size_t>(i)]; }
  const std::vector<std::int64_t>& dims() const { return dims_; }
  std::int64_t numel() const;
  auto begin() const { return dims_.begin(); }
  auto end() const { return dims_.end(); }
  friend bool operator==(const Shape&, const Shape&) = default;
  std::string to_string() const;  // "[2, 3, 4]"

 private:
  void check() const;  // asserts: literal shapes in code are programmer input
  std::vector<std::int64_t> dims_;
};

// Row-major strides: the last dimension has stride 1.
Strides contiguous_strides(const Shape& shape);
std::string to_string(const Strides& strides);

}  // namespace tessera
