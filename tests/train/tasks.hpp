// The small synthetic training task the train tests share, and comparisons of trained models.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <tessera/train.hpp>

#include "test_util.hpp"

namespace tessera::train {

// A small synthetic task: the label is which quarter of an 8x8 image is bright.
inline Dataset quarters(std::int64_t n, unsigned seed) {
  const std::vector<float> noise = testing::random_floats(static_cast<std::size_t>(n * 64), seed);
  std::vector<float> x(static_cast<std::size_t>(n * 64));
  std::vector<std::int64_t> y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t q = i % 4;
    y[static_cast<std::size_t>(i)] = q;
    for (std::int64_t r = 0; r < 8; ++r)
      for (std::int64_t c = 0; c < 8; ++c) {
        const bool in = (r < 4) == (q < 2) && (c < 4) == (q % 2 == 0);
        x[static_cast<std::size_t>(i * 64 + r * 8 + c)] = (in ? 0.6f : 0.0f) + 0.3f * noise[static_cast<std::size_t>(i * 64 + r * 8 + c)];
      }
  }
  return Dataset{Tensor::from_vector<float>(Shape({n, 1, 8, 8}), x).value_or_throw(), Tensor::from_vector<std::int64_t>(Shape({n}), y).value_or_throw()};
}

// Three epochs of batches of 16 with AdamW at 0.01: the small task's training.
inline TrainOptions three_adamw_epochs() {
  TrainOptions o;
  o.epochs = 3;
  o.batch = 16;
  o.optimizer.kind = "adamw";
  o.optimizer.lr = 0.01f;
  return o;
}

// The trained parameters of two runs, bit for bit.
inline void expect_same_parameters(const TrainResult& a, const TrainResult& b, const std::vector<std::string>& names) {
  for (const std::string& p : names) {
    const auto& ca = a.trained.graph.values[static_cast<std::size_t>(a.trained.graph.find(p))].constant;
    const auto& cb = b.trained.graph.values[static_cast<std::size_t>(b.trained.graph.find(p))].constant;
    EXPECT_EQ(ca->bytes, cb->bytes) << p;
  }
}

// Two epochs that checkpoint into `dir`, then a run resumed from there to three epochs: the
// resumed run's result.
inline TrainResult two_epochs_then_a_resumed_third(const graph::Model& m, const std::vector<std::string>& params, const Dataset& train_set,
                                                   const Dataset& test_set, TrainOptions o, const std::string& dir) {
  o.checkpoint_dir = dir;
  o.epochs = 2;
  fit(m, params, train_set, test_set, o).value_or_throw();
  o.epochs = 3;
  o.resume = true;
  return fit(m, params, train_set, test_set, o).value_or_throw();
}

}  // namespace tessera::train
