// The executor's shape, data-layout and reduction kernels: Identity, Dropout (ONNX's and the
// training layer's step-seeded one), Flatten, Reshape, Squeeze/Unsqueeze, Transpose, Concat,
// Constant, Size, Shape, Gather and the Reduce ops (the table is in kernels.cpp).
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>

#include "kernels.hpp"
#include "tessera/dnn/data_movement.hpp"
#include "tessera/dnn/tensor_ops.hpp"
#include "tessera/dnn/training.hpp"

namespace tessera::exec::detail {

using Dims = std::vector<std::int64_t>;

Status identity_kernel(KernelCall& c) {
  c.out[0] = *c.input(0);
  return Status::ok();
}

// Dropout: the identity (and an all-true mask) for inference; with training_mode true, the
// dnn primitive's counter-based mask from the `seed` attribute (0 without one), so a model
// gives the same output on every run and thread count.
namespace {
struct DropoutRuns final : NodeCache {
  std::uint64_t count = 0;
};
}  // namespace

Status dropout_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  bool training = false;
  double ratio = c.attr_float("ratio", 0.5f);
  if (c.opset >= 12) {
    if (c.input(1)) {
      TESSERA_ASSIGN_OR_RETURN(ratio, scalar_value(c.h, *c.input(1), "ratio"));
    }
    if (c.input(2)) {
      TESSERA_ASSIGN_OR_RETURN(const double t, scalar_value(c.h, *c.input(2), "training_mode"));
      training = t != 0;
    }
  }
  if (ratio < 0 || ratio > 1) return invalid_argument("ratio " + std::to_string(ratio) + " is outside [0, 1]");
  const bool mask = c.out.size() > 1 && c.node.outputs[1] != graph::kNoValue;
  if (!training) {
    c.out[0] = x;
    if (mask) {
      TESSERA_ASSIGN_OR_RETURN(c.out[1], c.output(1, x.shape().dims(), DType::kBool));
      std::memset(c.out[1].data(), 1, c.out[1].nbytes());
    }
    return Status::ok();
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  Tensor m;
  TESSERA_ASSIGN_OR_RETURN(m, like(x, DType::kBool));
  // A seed attribute gives the same mask on every run; without one each run of the node draws
  // a new mask (Philox offset = the run's number), reproducibly from one session to the next.
  std::uint64_t offset = 0;
  if (!c.attr("seed")) {
    if (!c.cache) c.cache = std::make_unique<DropoutRuns>();
    auto* runs = dynamic_cast<DropoutRuns*>(c.cache.get());
    if (!runs) return internal_error("the node's cache is not a dropout counter");
    offset = runs->count++;
  }
  TESSERA_RETURN_IF_ERROR(dnn::dropout_forward(c.h, static_cast<float>(ratio), static_cast<std::uint64_t>(c.attr_int("seed", 0)), offset, desc(x),
                                               x.data(), desc(c.out[0]), c.out[0].data(), desc(m), m.data()));
  if (mask) c.out[1] = std::move(m);
  return Status::ok();
}

// tessera.Dropout(X, ratio, offset) -> Y, mask: training-mode dropout whose random stream is
// the `seed` attribute at the given offset (i64 scalar): fit passes the optimiser step, so a
// resumed run draws the masks an uninterrupted one would.
Status step_dropout_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(const double ratio, scalar_value(c.h, *c.input(1), "ratio"));
  TESSERA_ASSIGN_OR_RETURN(const double offset, scalar_value(c.h, *c.input(2), "offset"));
  if (ratio < 0 || ratio >= 1) return invalid_argument("ratio " + std::to_string(ratio) + " is outside [0, 1)");
  if (offset < 0) return invalid_argument("offset " + std::to_string(offset) + " is negative");
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, x.shape().dims(), x.dtype()));
  Tensor m;
  TESSERA_ASSIGN_OR_RETURN(m, like(x, DType::kBool));
  TESSERA_RETURN_IF_ERROR(dnn::dropout_forward(c.h, static_cast<float>(ratio), static_cast<std::uint64_t>(c.attr_int("seed", 0)), static_cast<std::uint64_t>(offset),
                                               desc(x), x.data(), desc(c.out[0]), c.out[0].data(), desc(m), m.data()));
  if (c.out.size() > 1 && c.node.outputs[1] != graph::kNoValue) c.out[1] = std::move(m);
  return Status::ok();
}

Status flatten_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const std::int64_t a = c.attr_int("axis", 1);  // in [-rank, rank]
  TESSERA_ASSIGN_OR_RETURN(const int axis, a < 0 ? norm_axis(a, x.rank(), "axis") : norm_axis(a, x.rank() + 1, "axis"));
  const Dims& d = x.shape().dims();
  const auto outer = std::accumulate(d.begin(), d.begin() + axis, std::int64_t{1}, std::multiplies<>());
  const auto inner = std::accumulate(d.begin() + axis, d.end(), std::int64_t{1}, std::multiplies<>());
  TESSERA_ASSIGN_OR_RETURN(c.out[0], reshaped(c.h, x, {outer, inner}));
  return Status::ok();
}

Status reshape_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(Dims target, int_values(*c.input(1), "the shape"));
  const bool allowzero = c.attr_int("allowzero", 0) != 0;
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowzero) {
      if (static_cast<int>(i) >= x.rank()) return invalid_argument("shape entry " + std::to_string(i) + " copies a dim the input does not have");
      target[i] = x.shape()[static_cast<int>(i)];
    }
    if (target[i] == -1) {
      if (infer >= 0) return invalid_argument("the shape has two -1 entries");
      infer = static_cast<int>(i);
    } else if (target[i] < 0) {
      return invalid_argument("shape entry " + std::to_string(target[i]));
    } else {
      known *= target[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0) return invalid_argument(std::to_string(x.numel()) + " elements do not reshape to the shape");
    target[static_cast<std::size_t>(infer)] = x.numel() / known;
  } else if (known != x.numel()) {
    return invalid_argument(std::to_string(x.numel()) + " elements do not reshape to " + std::to_string(known));
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], reshaped(c.h, x, target));
  return Status::ok();
}

Status squeeze_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  const bool unsq = c.node.op_type == "Unsqueeze";
  std::optional<Dims> axes = c.attr_ints("axes");
  if (c.opset >= 13 && c.input(1)) {
    TESSERA_ASSIGN_OR_RETURN(axes, int_values(*c.input(1), "axes"));
  }
  const Dims& d = x.shape().dims();
  Dims out;
  if (!axes) {
    if (unsq) return invalid_argument("Unsqueeze needs axes");
    for (std::int64_t v : d)
      if (v != 1) out.push_back(v);
  } else {
    const int rank = x.rank() + (unsq ? static_cast<int>(axes->size()) : 0);
    std::vector<char> at(static_cast<std::size_t>(rank), 0);
    for (std::int64_t a : *axes) {
      TESSERA_ASSIGN_OR_RETURN(const int v, norm_axis(a, rank, "axis"));
      at[static_cast<std::size_t>(v)] = 1;
    }
    for (int i = 0, j = 0; i < rank; ++i) {
      if (unsq) {
        out.push_back(at[static_cast<std::size_t>(i)] ? 1 : d[static_cast<std::size_t>(j++)]);
      } else if (!at[static_cast<std::size_t>(i)]) {
        out.push_back(d[static_cast<std::size_t>(i)]);
      } else if (d[static_cast<std::size_t>(i)] != 1) {
        return invalid_argument("dim " + std::to_string(i) + " of size " + std::to_string(d[static_cast<std::size_t>(i)]) + " cannot be squeezed");
      }
    }
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], reshaped(c.h, x, out));
  return Status::ok();
}

Status transpose_kernel(KernelCall& c) {
  const Tensor& x = *c.input(0);
  std::vector<int> perm;
  if (const auto p = c.attr_ints("perm")) {
    for (std::int64_t v : *p) perm.push_back(static_cast<int>(v));
  } else {
    for (int i = x.rank() - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int>(perm.size()) != x.rank()) return invalid_argument("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(x.rank()));
  Dims dims;
  for (int p : perm) {
    if (p < 0 || p >= x.rank()) return invalid_argument("perm entry " + std::to_string(p) + " is out of range");
    dims.push_back(x.shape()[p]);
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, x.dtype()));
  return dnn::transpose(c.h, perm, desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}

Status concat_kernel(KernelCall& c) {
  const Tensor& x0 = *c.input(0);
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(c.attr_int("axis", 0), x0.rank(), "axis"));
  std::vector<dnn::TensorDesc> descs;
  std::vector<const void*> ptrs;
  Dims dims = x0.shape().dims();
  dims[static_cast<std::size_t>(axis)] = 0;
  for (const Tensor* t : c.in) {
    if (t->rank() != x0.rank()) return invalid_argument("inputs of ranks " + std::to_string(x0.rank()) + " and " + std::to_string(t->rank()));
    descs.push_back(desc(*t));
    ptrs.push_back(t->data());
    dims[static_cast<std::size_t>(axis)] += t->shape()[axis];
  }
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, x0.dtype()));
  return dnn::concat(c.h, axis, descs, ptrs, desc(c.out[0]), c.out[0].data());
}

Status constant_kernel(KernelCall& c) {
  if (const graph::Attribute* a = c.attr("value"); a && a->t) {
    TESSERA_ASSIGN_OR_RETURN(c.out[0], constant_tensor(*a->t, "Constant's value"));
    return Status::ok();
  }
  if (const graph::Attribute* a = c.attr("value_float")) {
    TESSERA_ASSIGN_OR_RETURN(c.out[0], Tensor::from_vector<float>(Shape{}, {a->f}));
  } else if (const graph::Attribute* b = c.attr("value_floats")) {
    TESSERA_ASSIGN_OR_RETURN(c.out[0], Tensor::from_vector<float>(Shape{static_cast<std::int64_t>(b->floats.size())}, b->floats));
  } else if (const graph::Attribute* i = c.attr("value_int")) {
    TESSERA_ASSIGN_OR_RETURN(c.out[0], Tensor::from_vector<std::int64_t>(Shape{}, {i->i}));
  } else if (const graph::Attribute* is = c.attr("value_ints")) {
    TESSERA_ASSIGN_OR_RETURN(c.out[0], Tensor::from_vector<std::int64_t>(Shape{static_cast<std::int64_t>(is->ints.size())}, is->ints));
  } else {
    return unsupported("Constant without a numeric value");
  }
  return Status::ok();
}

Status size_kernel(KernelCall& c) {
  TESSERA_ASSIGN_OR_RETURN(c.out[0], Tensor::from_vector<std::int64_t>(Shape{}, {c.input(0)->numel()}));
  return Status::ok();
}

Status shape_kernel(KernelCall& c) {
  const Dims& d = c.input(0)->shape().dims();
  const auto r = static_cast<std::int64_t>(d.size());
  std::int64_t s = c.attr_int("start", 0), e = c.attr_int("end", r);
  s = std::clamp<std::int64_t>(s < 0 ? s + r : s, 0, r);
  e = std::clamp<std::int64_t>(e < 0 ? e + r : e, 0, r);
  const Dims part(d.begin() + s, d.begin() + std::max(s, e));
  TESSERA_ASSIGN_OR_RETURN(c.out[0], Tensor::from_vector<std::int64_t>(Shape{static_cast<std::int64_t>(part.size())}, part));
  return Status::ok();
}

Status gather_kernel(KernelCall& c) {
  const Tensor &x = *c.input(0), &idx = *c.input(1);
  TESSERA_ASSIGN_OR_RETURN(const int axis, norm_axis(c.attr_int("axis", 0), x.rank(), "axis"));
  const Dims& d = x.shape().dims();
  Dims dims(d.begin(), d.begin() + axis);
  dims.insert(dims.end(), idx.shape().dims().begin(), idx.shape().dims().end());
  dims.insert(dims.end(), d.begin() + axis + 1, d.end());
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, dims, x.dtype()));
  return dnn::gather(c.h, axis, desc(x), x.data(), desc(idx), idx.data(), desc(c.out[0]), c.out[0].data());
}

Status reduce_kernel(KernelCall& c) {
  static const std::map<std::string, dnn::ReduceOp, std::less<>> kOps = {
      {"ReduceSum", dnn::ReduceOp::kSum},         {"ReduceMean", dnn::ReduceOp::kMean},
      {"ReduceProd", dnn::ReduceOp::kProd},       {"ReduceMax", dnn::ReduceOp::kMax},
      {"ReduceMin", dnn::ReduceOp::kMin},         {"ReduceL1", dnn::ReduceOp::kL1},
      {"ReduceL2", dnn::ReduceOp::kL2},           {"ReduceSumSquare", dnn::ReduceOp::kSumSquare},
      {"ReduceLogSum", dnn::ReduceOp::kLogSum},   {"ReduceLogSumExp", dnn::ReduceOp::kLogSumExp}};
  const Tensor& x = *c.input(0);
  std::optional<Dims> axes = c.attr_ints("axes");
  const bool from_input = c.opset >= 18 || (c.node.op_type == "ReduceSum" && c.opset >= 13);
  if (from_input) {
    axes.reset();
    if (c.input(1)) {
      TESSERA_ASSIGN_OR_RETURN(axes, int_values(*c.input(1), "axes"));
    }
  }
  if ((!axes || axes->empty()) && c.attr_int("noop_with_empty_axes", 0) != 0) {
    c.out[0] = x;
    return Status::ok();
  }
  std::vector<int> ax;
  if (axes)
    for (std::int64_t a : *axes) {
      TESSERA_ASSIGN_OR_RETURN(const int v, norm_axis(a, x.rank(), "axis"));
      ax.push_back(v);
    }
  const bool keep = c.attr_int("keepdims", 1) != 0;
  TESSERA_ASSIGN_OR_RETURN(dnn::TensorDesc yd, dnn::reduce_output_desc(desc(x), ax, keep));
  const dnn::ReduceOp op = kOps.find(c.node.op_type)->second;
  TESSERA_ASSIGN_OR_RETURN(c.out[0], c.output(0, yd.dims, x.dtype()));
  if (x.dtype() == DType::kBool && (op == dnn::ReduceOp::kMax || op == dnn::ReduceOp::kMin)) {  // any / all, through u8
    TESSERA_ASSIGN_OR_RETURN(Tensor xu, like(x, DType::kU8));
    TESSERA_ASSIGN_OR_RETURN(Tensor yu, new_tensor(yd.dims, DType::kU8));
    TESSERA_RETURN_IF_ERROR(dnn::cast(c.h, desc(x), x.data(), desc(xu), xu.data()));
    TESSERA_RETURN_IF_ERROR(dnn::reduce(c.h, op, ax, keep, desc(xu), xu.data(), desc(yu), yu.data()));
    return dnn::cast(c.h, desc(yu), yu.data(), desc(c.out[0]), c.out[0].data());
  }
  return dnn::reduce(c.h, op, ax, keep, desc(x), x.data(), desc(c.out[0]), c.out[0].data());
}


}  // namespace tessera::exec::detail
