// tessera training: reverse-mode differentiation of a model's graph (more of the training
// front end follows: optimisers, data, checkpoints; see docs/train.md).
//
//   graph::Model m = graph::import_onnx("net.onnx").value_or_throw();
//   graph::infer_types(m);
//   graph::Model t = train::differentiate(m, "loss", {"w1", "b1"}).value_or_throw();
//   exec::Session s = exec::Session::create(t).value_or_throw();
//   auto out = s.run({{"x", x}, {"labels", y}, {"w1", w1}, {"b1", b1}});  // loss, w1_grad, b1_grad
//
// The gradient graph is an ordinary model: the backward nodes are ai.onnx ops (Gemm, MatMul,
// Transpose, ReduceSum, Reshape, Mul, ...) and tessera's gradient ops (ConvGradData,
// ConvGradWeight, PoolGrad, ActivationGrad, SoftmaxCrossEntropyLossGrad: docs/exec.md), so it
// goes through the same passes, memory plan and executor as inference.
#pragma once

#include <string>
#include <vector>

#include "tessera/core/status.hpp"
#include "tessera/graph.hpp"

namespace tessera::train {

// The model extended with the gradient of the scalar value `loss` (one element) with respect
// to each value named in `wrt` (initializers or graph inputs, f32). The result's outputs are
// the loss, then d loss / d wrt[i] as "<wrt[i]>_grad" (zeros where the loss does not depend on
// it); initializers named in `wrt` become graph inputs that keep their value as the default,
// so a training loop can pass updated parameters to each run. `model` must have inferred types
// (graph::infer_types).
//
// Differentiated ops: Add, Sub, Mul, Div (NumPy broadcasting: the gradient is summed over the
// broadcast axes), Neg, Gemm, MatMul (rank >= 2), Conv (2-D and 1-D/3-D, groups, bias),
// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, the activations Relu, LeakyRelu,
// Sigmoid, Tanh, Elu, Softplus, Softsign, Gelu, HardSigmoid, HardSwish, Mish, Selu, Celu,
// Flatten, Reshape, Squeeze, Unsqueeze, Transpose, Identity, ReduceSum and ReduceMean (known
// dims), SoftmaxCrossEntropyLoss (no weights). A node on a path from a `wrt` value to the loss
// with another op is kUnsupported naming the node; so is a `wrt` name the graph lacks, or a
// loss that is not one f32 element.
Result<graph::Model> differentiate(const graph::Model& model, const std::string& loss, const std::vector<std::string>& wrt);

}  // namespace tessera::train
