// GradientReducer (reducer.hpp).
#include "reducer.hpp"

#include <cstring>

namespace tessera::train::detail {

GradientReducer::GradientReducer(Communicator& c, const std::vector<std::vector<std::int64_t>>& dims, std::size_t bucket_bytes)
    : comm_(c), dims_(dims), bucket_of_(dims.size()), offset_(dims.size()), seen_(dims.size(), 0) {
  for (std::size_t k = dims.size(); k-- > 0;) {
    std::size_t n = 1;
    for (std::int64_t d : dims[k]) n *= static_cast<std::size_t>(d);
    if (buckets_.empty() || (buckets_.back().size() > 0 && (buckets_.back().size() + n) * sizeof(float) > bucket_bytes)) {
      buckets_.emplace_back();
      members_.push_back(0);
    }
    bucket_of_[k] = buckets_.size() - 1;
    offset_[k] = buckets_.back().size();
    buckets_.back().resize(buckets_.back().size() + n);
    ++members_.back();
  }
  waiting_ = members_;
  thread_ = std::thread([this] { work(); });
}

GradientReducer::~GradientReducer() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void GradientReducer::start(float scale) {
  const std::lock_guard<std::mutex> lock(mu_);
  scale_ = scale;
  waiting_ = members_;
  std::fill(seen_.begin(), seen_.end(), 0);
  reduced_ = 0;
  error_ = Status::ok();
}

void GradientReducer::ready(std::size_t k, const Tensor& g) {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    if (seen_[k]) return;
    seen_[k] = 1;
  }
  const std::size_t b = bucket_of_[k];
  const bool fits = g.dtype() == DType::kF32 && g.shape().dims() == dims_[k];
  if (fits) {  // its own part of a bucket the thread does not touch yet
    float* to = buckets_[b].data() + offset_[k];
    const float* from = g.data<float>();
    for (std::size_t i = 0, n = static_cast<std::size_t>(g.numel()); i < n; ++i) to[i] = from[i] * scale_;
  }
  const std::lock_guard<std::mutex> lock(mu_);
  if (!fits && error_.is_ok())
    error_ = internal_error("gradient " + std::to_string(k) + " is " + g.shape().to_string() + " " + std::string(dtype_name(g.dtype())) +
                            ", not f32 of its parameter's dims");
  if (--waiting_[b] == 0) {  // still reduced when broken: the other ranks wait for it
    queue_.push_back(b);
    cv_.notify_all();
  }
}

void GradientReducer::work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;
    const std::size_t b = queue_.front();
    queue_.pop_front();
    lock.unlock();
    const Status s = all_reduce_sum(comm_, std::span<float>(buckets_[b]));
    lock.lock();
    if (!s.is_ok() && error_.is_ok()) error_ = s;
    ++reduced_;
    cv_.notify_all();
  }
}

Result<std::vector<Tensor>> GradientReducer::finish() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    for (std::size_t k = 0; k < seen_.size(); ++k)
      if (!seen_[k]) {
        // Its bucket never reaches the thread: the ranks would wait on each other forever.
        comm_.abort("gradient " + std::to_string(k) + " was not made");
        return internal_error("the step did not make gradient " + std::to_string(k));
      }
    cv_.wait(lock, [&] { return reduced_ == buckets_.size(); });
    TESSERA_RETURN_IF_ERROR(error_);
  }
  std::vector<Tensor> out;
  for (std::size_t k = 0; k < dims_.size(); ++k) {
    TESSERA_ASSIGN_OR_RETURN(Tensor t, Tensor::empty(Shape(dims_[k]), DType::kF32));
    std::memcpy(t.data(), buckets_[bucket_of_[k]].data() + offset_[k], static_cast<std::size_t>(t.numel()) * sizeof(float));
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace tessera::train::detail
