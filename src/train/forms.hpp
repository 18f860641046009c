// A model's training form (fit): its BatchNormalization nodes in training mode, with running
// statistics that are state carried from one step to the next.
#pragma once

#include <string>
#include <vector>

#include "tessera/train.hpp"

namespace tessera::train::detail {

struct TrainingForm {
  // The model with every BatchNormalization in training mode, its running mean and variance
  // made graph inputs (with their values as defaults) and their next values (outputs 1 and 2
  // of the node) named in `updates`.
  graph::Model model;
  // The same model as given (inference mode), its running statistics graph inputs too, so the
  // current values can be passed to each run.
  graph::Model inference;
  std::vector<std::string> state;    // the running statistics' initializers
  std::vector<std::string> updates;  // per state value: the value holding its next value
  // Dropout nodes become tessera.Dropout(X, ratio, step) in training mode, their masks drawn at
  // the offset fed to this i64 scalar input each step (empty: the model has no dropout).
  std::string step_input;
};

// BatchNormalization nodes whose running statistics are initializers become training-mode
// nodes, Dropout nodes with a constant ratio (or none) tessera.Dropout; one of a model of opset below 14 (no training mode), or whose statistics are computed
// rather than stored, is an error naming it.
Result<TrainingForm> training_form(const graph::Model& m);

}  // namespace tessera::train::detail
