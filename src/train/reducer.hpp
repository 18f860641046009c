// fit's data parallelism: the gradients of one step summed over the ranks in buckets, each
// bucket reduced on a thread of its own as soon as the backward pass has made all of its
// gradients (Session::run's on_output), while the rest of the backward pass runs.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "tessera/train.hpp"

namespace tessera::train::detail {

class GradientReducer {
 public:
  // Gradients of the given dims, in parameter order. Buckets of about bucket_bytes are filled
  // from the last parameter backwards: the order in which the backward pass makes them.
  GradientReducer(Communicator& c, const std::vector<std::vector<std::int64_t>>& dims, std::size_t bucket_bytes);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // A new step: each gradient is multiplied by `scale` (the shard's share of the batch).
  void start(float scale);
  // Gradient k is final: copied (times the scale) into its bucket; a complete bucket goes to
  // the reducing thread. Thread-safe.
  void ready(std::size_t k, const Tensor& g);
  // Waits until every bucket is reduced; the summed gradients (new tensors), or the first error
  // (a gradient the step never made, a failed exchange).
  Result<std::vector<Tensor>> finish();

 private:
  void work();

  Communicator& comm_;
  std::vector<std::vector<std::int64_t>> dims_;
  std::vector<std::size_t> bucket_of_, offset_;  // per gradient: its bucket, its place in it
  std::vector<std::vector<float>> buckets_;
  std::vector<int> members_, waiting_;            // per bucket: gradients in it, still to come
  std::vector<char> seen_;                        // per gradient, this step
  float scale_ = 1;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::size_t> queue_;  // complete buckets for the thread
  std::size_t reduced_ = 0;        // buckets done this step
  Status error_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace tessera::train::detail
