// Tensor: a shared Buffer + byte offset + DType + Shape + strides (in elements).
//
// Copies of a Tensor and views made from it (slice, select, permute, reshape) share the
// Buffer; writes through one are seen by all. New tensors are contiguous row-major.
// Element access (data(), at(), to_vector()) needs the buffer in host memory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <tessera/core/dtype.hpp>
#include <tessera/core/memory.hpp>
#include <tessera/core/shape.hpp>
#include <tessera/core/status.hpp>

namespace tessera {

class Tensor {
 public:
  Tensor() = default;  // undefined: holds no buffer

  static Result<Tensor> empty(const Shape& shape, DType dtype, Allocator& alloc = host_allocator());
  static Result<Tensor> zeros(const Shape& shape, DType dtype, Allocator& alloc = host_allocator());
  // A view over an existing buffer; fails if any addressed element falls outside it.
  static Result<Tensor> view_of(std::shared_ptr<Buffer> buffer, std::size_t offset_bytes,
                                DType dtype, const Shape& shape, const Strides& strides);
  // A new contiguous host tensor holding `values` (row-major); sizes must match.
  template <typename T>
  static Result<Tensor> from_vector(const Shape& shape, const std::vector<T>& values);

  bool defined() const { return buffer_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Strides& strides() const { return strides_; }
  int rank() const { return shape_.rank(); }
  std::int64_t numel() const { return shape_.numel(); }
  std::size_t element_size() const { return dtype_size(dtype_); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * element_size(); }
  std::size_t offset_bytes() const { return offset_bytes_; }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  DeviceLoc device() const { return buffer_ ? buffer_->device() : DeviceLoc{}; }
  bool is_contiguous() const;

  // Address of element [0, ..., 0] (host buffers only).
  void* data() const;
  template <typename T>
  T* data() const {
    TESSERA_ASSERT(dtype_of<T>() == dtype_, "Tensor::data<T>: T does not match the dtype");
    return static_cast<T*>(data());
  }
  // Checked element access for tests and tools: index count and bounds are asserted.
  template <typename T>
  T& at(std::initializer_list<std::int64_t> index) const {
    return data<T>()[element_offset(index)];
  }
  std::int64_t element_offset(std::initializer_list<std::int64_t> index) const;

  // Views (share the buffer). Errors name the bad argument.
  // Elements start, start+step, ... while < stop (step > 0) or > stop (step < 0);
  // 0 <= start <= dim for step > 0, -1 <= stop < start < dim for step < 0.
  Result<Tensor> slice(int dim, std::int64_t start, std::int64_t stop, std::int64_t step = 1) const;
  Result<Tensor> select(int dim, std::int64_t index) const;  // drops `dim`
  Result<Tensor> permute(const std::vector<int>& perm) const;
  Result<Tensor> transpose(int a, int b) const;
  // A view when the tensor is contiguous; otherwise kUnsupported (call contiguous() first).
  Result<Tensor> reshape(const Shape& shape) const;

  // A contiguous copy (or this tensor itself if already contiguous).
  Result<Tensor> contiguous() const;
  // A fresh contiguous copy, never sharing storage.
  Result<Tensor> clone() const;
  // Copies src's elements into this tensor; shapes and dtypes must match. Overlap is an error.
  Status copy_from(const Tensor& src) const;

  // Elements in row-major logical order (host only; T must match the dtype).
  template <typename T>
  std::vector<T> to_vector() const;
  template <typename T>
  void fill(T value) const;

  std::string to_string() const;  // "Tensor(f32, [2, 3], strides [3, 1], cpu:0)"

 private:
  Tensor(std::shared_ptr<Buffer> buffer, std::size_t offset, DType dtype, Shape shape,
         Strides strides)
      : buffer_(std::move(buffer)),
        offset_bytes_(offset),
        dtype_(dtype),
        shape_(std::move(shape)),
        strides_(std::move(strides)) {}
  Status check_host(const char* what) const;

  std::shared_ptr<Buffer> buffer_;
  std::size_t offset_bytes_ = 0;
  DType dtype_ = DType::kF32;
  Shape shape_;
  Strides strides_;
};

// Calls fn(element_pointer) for every element in row-major logical order.
void for_each_element(const Tensor& t, const std::function<void(void*)>& fn);
// True when dtype, shape and every element's bytes are equal (NaNs compare by bits).
bool bitwise_equal(const Tensor& a, const Tensor& b);

template <typename T>
Result<Tensor> Tensor::from_vector(const Shape& shape, const std::vector<T>& values) {
  if (static_cast<std::int64_t>(values.size()) != shape.numel())
    return invalid_argument("from_vector: " + std::to_string(values.size()) + " values for shape " +
                            shape.to_string());
  TESSERA_ASSIGN_OR_RETURN(Tensor t, empty(shape, dtype_of<T>()));
  T* p = t.data<T>();
  for (std::size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  TESSERA_ASSERT(dtype_of<T>() == dtype_, "Tensor::to_vector<T>: T does not match the dtype");
  std::vector<T> out;
  out.reserve(static_cast<std::size_t>(numel()));
  for_each_element(*this, [&](void* p) { out.push_back(*static_cast<T*>(p)); });
  return out;
}

template <typename T>
void Tensor::fill(T value) const {
  TESSERA_ASSERT(dtype_of<T>() == dtype_, "Tensor::fill<T>: T does not match the dtype");
  for_each_element(*this, [&](void* p) { *static_cast<T*>(p) = value; });
}

}  // namespace tessera
