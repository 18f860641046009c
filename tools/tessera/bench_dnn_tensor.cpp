// `tessera bench dnn eltwise|reduce|move ...`: the tensor operations against the machine's
// memory copy. Each case alternates the operation with a copy (memcpy split over the same threads)
// that moves as many bytes as the operation reads plus writes, and prints both rates (GB/s
// of bytes read + written) and their ratio: the target is >= 0.8 for tensors larger
// than the L2 cache.
#include <cstring>
#include <memory>
#include <random>

#include "bench_dnn.hpp"
#include "commands.hpp"
#include "tessera/core/thread_pool.hpp"

namespace tessera::cli::dnn_bench {
namespace {

using nlohmann::json;

struct TensorArgs {
  std::string op, dims, dims_b, dtype = "f32", axes, perm, to, mode = "edge", dir = "fwd", reduction = "mean";
  std::string index_dims, reduce = "none";
  bool keepdims = false;
  int axis = 0, batch_dims = 0;
  std::int64_t k = 8, depth = 1000;
  float ratio = 0.1f, smoothing = 0.0f;
};
enum class Kind { kEltwise, kReduce, kMove, kTrain };
const char* kind_name(Kind k) {
  return k == Kind::kEltwise ? "eltwise" : k == Kind::kReduce ? "reduce" : k == Kind::kMove ? "move" : "train";
}

// Random bytes that are valid values of any dtype (bools 0/1; floats in [lo, hi), by default
// [-2, 2)).
void fill_random(void* p, DType t, std::int64_t n, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(lo, hi);
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = u(rng);
    switch (t) {
      case DType::kBool: static_cast<unsigned char*>(p)[i] = v > 0; break;
      case DType::kI8: static_cast<std::int8_t*>(p)[i] = static_cast<std::int8_t>(v * 50); break;
      case DType::kU8: static_cast<std::uint8_t*>(p)[i] = static_cast<std::uint8_t>(v * 50 + 100); break;
      case DType::kI32: static_cast<std::int32_t*>(p)[i] = static_cast<std::int32_t>(v * 1000); break;
      case DType::kI64: static_cast<std::int64_t*>(p)[i] = static_cast<std::int64_t>(v * 1000); break;
      case DType::kF16: static_cast<std::uint16_t*>(p)[i] = f32_to_f16_bits(v); break;
      case DType::kBF16: static_cast<std::uint16_t*>(p)[i] = f32_to_bf16_bits(v); break;
      case DType::kF32: static_cast<float*>(p)[i] = v; break;
      case DType::kF64: static_cast<double*>(p)[i] = v; break;
      default: break;
    }
  }
}

struct Buffer {
  AlignedBuffer mem;
  dnn::TensorDesc desc;
  Buffer(DType t, std::vector<std::int64_t> dims, const char* what, bool random, std::pair<float, float> range = {-2.0f, 2.0f})
      : mem(static_cast<std::size_t>(std::max<std::int64_t>(1, dnn::TensorDesc::make(t, dims).numel())) * dtype_size(t), what),
        desc(dnn::TensorDesc::make(t, std::move(dims))) {
    if (random) fill_random(mem.data(), t, desc.numel(), range.first, range.second);
    else std::memset(mem.data(), 0, static_cast<std::size_t>(std::max<std::int64_t>(1, desc.numel())) * dtype_size(t));
  }
};

std::vector<std::int64_t> dims_of(const std::string& flag, const std::string& text, std::int64_t min = 0) {
  if (text.empty()) return {};
  return parse_dims(flag, text, min);
}

// i64 indices uniform over [0, hi).
void fill_indices(Buffer& b, std::int64_t hi) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::int64_t> pick(0, std::max<std::int64_t>(0, hi - 1));
  for (std::int64_t i = 0; i < b.desc.numel(); ++i) static_cast<std::int64_t*>(b.mem.data())[i] = pick(rng);
}

// Index tuples (the last dim of b): entry j of each uniform over [0, lims[j]).
void fill_tuples(Buffer& b, const std::vector<std::int64_t>& lims) {
  std::mt19937 rng(3);
  const auto k = static_cast<std::int64_t>(lims.size());
  for (std::int64_t i = 0; i < b.desc.numel(); ++i)
    static_cast<std::int64_t*>(b.mem.data())[i] =
        std::uniform_int_distribution<std::int64_t>(0, lims[static_cast<std::size_t>(i % k)] - 1)(rng);
}

// gather_nd / scatter_nd: indices of --index-dims whose last dim k is the tuples' length, after
// --batch-dims dims shared with x (gather_nd only).
void setup_nd(const TensorArgs& a, DType dt, Buffer& x, std::vector<Buffer>& bufs, std::int64_t& traffic, std::string& what,
              std::function<Status(dnn::Handle&)>& call) {
  const auto bytes = [](const Buffer& b) { return b.desc.numel() * static_cast<std::int64_t>(dtype_size(b.desc.dtype)); };
  const bool gather = a.op == "gather_nd";
  const int r = x.desc.rank(), b = gather ? a.batch_dims : 0;
  if (a.index_dims.empty()) bad("--index-dims: the indices' dims, the last one the tuples' length");
  const auto id = dims_of("--index-dims", a.index_dims, 1);
  const auto q = static_cast<int>(id.size());
  const std::int64_t k = id.back();
  if (b < 0 || b >= q || k > r - b) bad("--index-dims, --batch-dims: tuples of at most x's rank less the batch dims");
  for (int i = 0; i < b; ++i)
    if (id[static_cast<std::size_t>(i)] != x.desc.dims[static_cast<std::size_t>(i)]) bad("--index-dims: the batch dims must be x's");
  Buffer& idx = bufs.emplace_back(DType::kI64, id, "indices", false);
  fill_tuples(idx, {x.desc.dims.begin() + b, x.desc.dims.begin() + b + k});
  std::vector<std::int64_t> yd(id.begin(), id.end() - 1);  // (the updates' dims for scatter_nd)
  yd.insert(yd.end(), x.desc.dims.begin() + b + k, x.desc.dims.end());
  what += " --index-dims " + a.index_dims;
  if (gather) {
    Buffer& y = bufs.emplace_back(dt, yd, "y", false);
    traffic = bytes(idx) + 2 * bytes(y);  // only the slabs picked are read
    if (b > 0) what += " --batch-dims " + std::to_string(b);
    call = [&, b](dnn::Handle& h) { return dnn::gather_nd(h, b, x.desc, x.mem.data(), idx.desc, idx.mem.data(), y.desc, y.mem.data()); };
    return;
  }
  const auto red = dnn::parse_scatter_reduce(a.reduce);
  if (!red) bad("--reduce: none, add, mul, max or min");
  Buffer& u = bufs.emplace_back(dt, yd, "updates", true);
  Buffer& y = bufs.emplace_back(dt, x.desc.dims, "y", false);
  // y = x, then the updates read and their slabs of y written (and read first by a reduction)
  traffic += bytes(idx) + bytes(y) + bytes(u) * (*red == dnn::ScatterReduce::kNone ? 2 : 3);
  what += " --reduce " + a.reduce;
  call = [&, red](dnn::Handle& h) {
    return dnn::scatter_nd(h, *red, x.desc, x.mem.data(), idx.desc, idx.mem.data(), u.desc, u.mem.data(), y.desc, y.mem.data());
  };
}

// An indexing case (gather, gather_elements, scatter_elements, one_hot, top_k): its tensors in
// `bufs` and the call, the bytes it must read + write added to `traffic` (x's already counted).
void setup_indexing(const TensorArgs& a, DType dt, Buffer& x, std::vector<Buffer>& bufs, std::int64_t& traffic,
                    std::string& what, std::function<Status(dnn::Handle&)>& call) {
  const auto bytes = [](const Buffer& b) { return b.desc.numel() * static_cast<std::int64_t>(dtype_size(b.desc.dtype)); };
  const int r = x.desc.rank();
  bufs.reserve(4);
  if (a.op == "one_hot") {  // --dims are the indices' dims; y appends a dim of --depth
    if (a.depth < 1) bad("--depth: at least 1");
    traffic = 0;
    Buffer& idx = bufs.emplace_back(DType::kI64, x.desc.dims, "indices", false);
    fill_indices(idx, a.depth);
    auto yd = x.desc.dims;
    yd.push_back(a.depth);
    Buffer& y = bufs.emplace_back(dt, yd, "y", false);
    traffic += bytes(idx) + bytes(y);
    what += " --depth " + std::to_string(a.depth);
    call = [&, depth = a.depth](dnn::Handle& h) { return dnn::one_hot(h, -1, depth, 0.0, 1.0, idx.desc, idx.mem.data(), y.desc, y.mem.data()); };
    return;
  }
  if (a.op == "gather_nd" || a.op == "scatter_nd") {
    setup_nd(a, dt, x, bufs, traffic, what, call);
    return;
  }
  if (a.axis < -r || a.axis >= r) bad("--axis: a dim of x");
  const auto ax = static_cast<std::size_t>(a.axis < 0 ? a.axis + r : a.axis);
  const std::int64_t n = x.desc.dims[ax];
  what += " --axis " + std::to_string(a.axis);
  if (a.op == "gather") {  // indices of --index-dims (default: x's dim along the axis)
    const auto id = a.index_dims.empty() ? std::vector<std::int64_t>{n} : dims_of("--index-dims", a.index_dims);
    Buffer& idx = bufs.emplace_back(DType::kI64, id, "indices", false);
    fill_indices(idx, n);
    std::vector<std::int64_t> yd(x.desc.dims.begin(), x.desc.dims.begin() + static_cast<std::ptrdiff_t>(ax));
    yd.insert(yd.end(), id.begin(), id.end());
    yd.insert(yd.end(), x.desc.dims.begin() + static_cast<std::ptrdiff_t>(ax) + 1, x.desc.dims.end());
    Buffer& y = bufs.emplace_back(dt, yd, "y", false);
    traffic = bytes(idx) + 2 * bytes(y);  // only the rows picked are read
    if (!a.index_dims.empty()) what += " --index-dims " + a.index_dims;
    call = [&](dnn::Handle& h) { return dnn::gather(h, a.axis, x.desc, x.mem.data(), idx.desc, idx.mem.data(), y.desc, y.mem.data()); };
  } else if (a.op == "gather_elements") {  // indices of --index-dims (default: x's dims)
    const auto id = a.index_dims.empty() ? x.desc.dims : dims_of("--index-dims", a.index_dims);
    Buffer& idx = bufs.emplace_back(DType::kI64, id, "indices", false);
    fill_indices(idx, n);
    Buffer& y = bufs.emplace_back(dt, id, "y", false);
    if (!a.index_dims.empty()) {
      traffic = bytes(y);  // only the elements picked are read
      what += " --index-dims " + a.index_dims;
    }
    traffic += bytes(idx) + bytes(y);
    call = [&](dnn::Handle& h) { return dnn::gather_elements(h, a.axis, x.desc, x.mem.data(), idx.desc, idx.mem.data(), y.desc, y.mem.data()); };
  } else if (a.op == "scatter_elements") {
    const auto red = dnn::parse_scatter_reduce(a.reduce);
    if (!red) bad("--reduce: none, add, mul, max or min");
    const auto id = a.index_dims.empty() ? x.desc.dims : dims_of("--index-dims", a.index_dims);  // (default: x's dims)
    Buffer& idx = bufs.emplace_back(DType::kI64, id, "indices", false);
    fill_indices(idx, n);
    Buffer& u = bufs.emplace_back(dt, id, "updates", true);
    Buffer& y = bufs.emplace_back(dt, x.desc.dims, "y", false);
    traffic += bytes(idx) + bytes(u) + bytes(y);
    if (!a.index_dims.empty()) {
      traffic += 2 * bytes(u);  // y = x, then the elements updated read and written again
      what += " --index-dims " + a.index_dims;
    }
    what += " --reduce " + a.reduce;
    call = [&, red](dnn::Handle& h) {
      return dnn::scatter_elements(h, a.axis, *red, x.desc, x.mem.data(), idx.desc, idx.mem.data(), u.desc, u.mem.data(), y.desc, y.mem.data());
    };
  } else if (a.op == "top_k") {
    if (a.k < 0 || a.k > n) bad("--k: in [0, the dim along --axis]");
    auto vd = x.desc.dims;
    vd[ax] = a.k;
    Buffer& v = bufs.emplace_back(dt, vd, "values", false);
    Buffer& i = bufs.emplace_back(DType::kI64, vd, "indices", false);
    traffic += bytes(v) + bytes(i);
    what += " --k " + std::to_string(a.k);
    call = [&, k = a.k](dnn::Handle& h) { return dnn::top_k(h, a.axis, k, true, x.desc, x.mem.data(), v.desc, v.mem.data(), i.desc, i.mem.data()); };
  } else {
    bad("--op: '" + a.op + "' is not transpose, cast, copy, concat, split, pad, cumsum, gather, gather_elements, "
        "gather_nd, scatter_elements, scatter_nd, one_hot or top_k");
  }
}

bool is_indexing(const std::string& op) {
  return op == "gather" || op == "gather_elements" || op == "gather_nd" || op == "scatter_elements" || op == "scatter_nd" ||
         op == "one_hot" || op == "top_k";
}

// A data-movement case: y and the call, the bytes it reads + writes added to `traffic`.
void setup_move(const TensorArgs& a, DType dt, Buffer& x, std::optional<Buffer>& y, std::vector<Buffer>& parts,
                std::int64_t& traffic, std::string& what, std::function<Status(dnn::Handle&)>& call) {
  const int r = x.desc.rank();
  const auto bytes = [](const Buffer& b) { return b.desc.numel() * static_cast<std::int64_t>(dtype_size(b.desc.dtype)); };
  if (a.op == "transpose") {
    std::vector<int> perm;
    for (std::int64_t v : dims_of("--perm", a.perm)) perm.push_back(static_cast<int>(v));
    if (perm.empty())
      for (int i = r - 1; i >= 0; --i) perm.push_back(i);
    if (static_cast<int>(perm.size()) != r) bad("--perm: give one entry per dim, e.g. 0x2x1");
    std::vector<std::int64_t> yd;
    for (int p : perm) {
      if (p < 0 || p >= r) bad("--perm: entry " + std::to_string(p) + " is out of range");
      yd.push_back(x.desc.dims[static_cast<std::size_t>(p)]);
    }
    y.emplace(dt, yd, "y", false);
    what += " --perm " + (a.perm.empty() ? std::string("reversed") : a.perm);
    call = [&, perm](dnn::Handle& h) { return dnn::transpose(h, perm, x.desc, x.mem.data(), y->desc, y->mem.data()); };
  } else if (a.op == "cast" || a.op == "copy") {
    const std::optional<DType> to = a.op == "copy" ? dt : parse_dtype(a.to);
    if (!to) bad("--to: '" + a.to + "' is not a dtype");
    y.emplace(*to, x.desc.dims, "y", false);
    if (a.op == "cast") what += " --to " + a.to;
    call = [&](dnn::Handle& h) { return dnn::cast(h, x.desc, x.mem.data(), y->desc, y->mem.data()); };
  } else if (a.op == "concat" || a.op == "split") {
    // Two halves of x along --axis.
    if (a.axis < 0 || a.axis >= r || x.desc.dims[static_cast<std::size_t>(a.axis)] < 2) bad("--axis: a dim of x with at least 2 elements");
    auto half = x.desc.dims;
    const auto ax = static_cast<std::size_t>(a.axis);
    half[ax] = x.desc.dims[ax] / 2;
    auto rest = x.desc.dims;
    rest[ax] = x.desc.dims[ax] - half[ax];
    parts.emplace_back(dt, half, "part 0", a.op == "concat");
    parts.emplace_back(dt, rest, "part 1", a.op == "concat");
    what += " --axis " + std::to_string(a.axis);
    if (a.op == "concat") {
      y.emplace(dt, x.desc.dims, "y", false);
      traffic = 0;  // x only gives the dims
      for (const Buffer& p : parts) traffic += bytes(p);
      call = [&](dnn::Handle& h) {
        const dnn::TensorDesc d[] = {parts[0].desc, parts[1].desc};
        const void* p[] = {parts[0].mem.data(), parts[1].mem.data()};
        return dnn::concat(h, a.axis, d, p, y->desc, y->mem.data());
      };
      traffic += bytes(*y);
      return;
    }
    traffic += bytes(parts[0]) + bytes(parts[1]);
    call = [&](dnn::Handle& h) {
      const dnn::TensorDesc d[] = {parts[0].desc, parts[1].desc};
      void* p[] = {parts[0].mem.data(), parts[1].mem.data()};
      return dnn::split(h, a.axis, x.desc, x.mem.data(), d, p);
    };
    return;
  } else if (a.op == "pad") {
    // One element on each side of the last two dims (a 3x3 convolution's padding).
    const auto mode = dnn::parse_pad_mode(a.mode);
    if (!mode) bad("--mode: constant, reflect, edge or wrap");
    std::vector<std::int64_t> pads(static_cast<std::size_t>(2 * r), 0), yd = x.desc.dims;
    for (int i = std::max(0, r - 2); i < r; ++i) {
      pads[static_cast<std::size_t>(i)] = pads[static_cast<std::size_t>(i + r)] = 1;
      yd[static_cast<std::size_t>(i)] += 2;
    }
    y.emplace(dt, yd, "y", false);
    what += " --mode " + a.mode;
    call = [&, pads, mode](dnn::Handle& h) { return dnn::pad(h, *mode, pads, 0.0, x.desc, x.mem.data(), y->desc, y->mem.data()); };
  } else if (a.op == "cumsum") {
    if (a.axis < -r || a.axis >= r) bad("--axis: a dim of x");
    y.emplace(dt, x.desc.dims, "y", false);
    what += " --axis " + std::to_string(a.axis);
    call = [&](dnn::Handle& h) { return dnn::cumsum(h, a.axis, false, false, x.desc, x.mem.data(), y->desc, y->mem.data()); };
  } else {
    bad("--op: '" + a.op + "' is not transpose, cast, copy, concat, split, pad, cumsum, gather, gather_elements, "
        "gather_nd, scatter_elements, scatter_nd, one_hot or top_k");
  }
  traffic += bytes(*y);
}

// A training case (dropout or a loss, --dir fwd or bwd): its tensors and the call, the bytes it
// reads + writes added to `traffic` (x's bytes are already counted). Labels are uniform over
// the classes; a scalar loss counts no bytes.
void setup_train(const TensorArgs& a, DType dt, Buffer& x, std::vector<Buffer>& bufs, std::int64_t& traffic,
                 std::string& what, std::function<Status(dnn::Handle&)>& call) {
  const auto bytes = [](const Buffer& b) { return b.desc.numel() * static_cast<std::int64_t>(dtype_size(b.desc.dtype)); };
  const bool bwd = a.dir == "bwd";
  if (a.dir != "fwd" && !bwd) bad("--dir: fwd or bwd");
  what += " --dir " + a.dir;
  const auto red = dnn::parse_loss_reduction(a.reduction);
  if (!red) bad("--reduction: none, sum or mean");
  bufs.reserve(4);
  if (a.op == "dropout") {
    what += " --ratio " + std::to_string(a.ratio);
    if (!bwd) {
      Buffer& y = bufs.emplace_back(dt, x.desc.dims, "y", false);
      Buffer& m = bufs.emplace_back(DType::kBool, x.desc.dims, "mask", false);
      traffic += bytes(y) + bytes(m);
      call = [&](dnn::Handle& h) { return dnn::dropout_forward(h, a.ratio, 42, 0, x.desc, x.mem.data(), y.desc, y.mem.data(), m.desc, m.mem.data()); };
      return;
    }
    // x plays dy; the mask is drawn once by the forward.
    Buffer& dx = bufs.emplace_back(dt, x.desc.dims, "dx", false);
    Buffer& m = bufs.emplace_back(DType::kBool, x.desc.dims, "mask", false);
    dnn::Handle once;
    if (Status s = dnn::dropout_forward(once, a.ratio, 42, 0, x.desc, x.mem.data(), dx.desc, dx.mem.data(), m.desc, m.mem.data()); !s.is_ok()) bad(s.message());
    traffic += bytes(dx) + bytes(m);
    call = [&](dnn::Handle& h) { return dnn::dropout_backward(h, a.ratio, m.desc, m.mem.data(), x.desc, x.mem.data(), dx.desc, dx.mem.data()); };
    return;
  }
  what += " --reduction " + a.reduction;
  std::vector<std::int64_t> ld;  // the loss's dims
  if (const auto pk = dnn::parse_point_loss(a.op)) {
    Buffer& t = bufs.emplace_back(dt, x.desc.dims, "target", true);
    if (*pk == dnn::PointLoss::kBceWithLogits) fill_random(t.mem.data(), dt, t.desc.numel(), 0.0f, 1.0f);
    if (*red == dnn::LossReduction::kNone) ld = x.desc.dims;
    Buffer& l = bufs.emplace_back(dt, ld, bwd ? "dloss" : "loss", bwd);
    traffic += bytes(t) + (ld.empty() ? 0 : bytes(l));
    dnn::PointLossParams p;
    p.kind = *pk;
    p.reduction = *red;
    if (!bwd) {
      call = [&, p](dnn::Handle& h) { return dnn::point_loss_forward(h, p, x.desc, x.mem.data(), t.desc, t.mem.data(), l.desc, l.mem.data()); };
      return;
    }
    Buffer& dx = bufs.emplace_back(dt, x.desc.dims, "dx", false);
    traffic += bytes(dx);
    call = [&, p](dnn::Handle& h) { return dnn::point_loss_backward(h, p, x.desc, x.mem.data(), t.desc, t.mem.data(), l.desc, l.mem.data(), dx.desc, dx.mem.data()); };
    return;
  }
  if (a.op != "softmax_ce" && a.op != "nll") bad("--op: dropout, softmax_ce, nll, mse, l1, smooth_l1 or bce_with_logits");
  if (x.desc.rank() < 2) bad("--dims: [N, C, ...] for a class loss");
  std::vector<std::int64_t> sd = x.desc.dims;
  sd.erase(sd.begin() + 1);
  Buffer& lab = bufs.emplace_back(DType::kI64, sd, "labels", false);
  std::mt19937 rng(2);
  std::uniform_int_distribution<std::int64_t> pick(0, x.desc.dims[1] - 1);
  for (std::int64_t i = 0; i < lab.desc.numel(); ++i) static_cast<std::int64_t*>(lab.mem.data())[i] = pick(rng);
  if (*red == dnn::LossReduction::kNone) ld = sd;
  Buffer& l = bufs.emplace_back(dt, ld, bwd ? "dloss" : "loss", bwd);
  traffic += bytes(lab) + (ld.empty() ? 0 : bytes(l));
  dnn::ClassLossParams p;
  p.reduction = *red;
  p.label_smoothing = a.smoothing;
  if (a.smoothing != 0) what += " --smoothing " + std::to_string(a.smoothing);
  const bool ce = a.op == "softmax_ce";
  if (!bwd) {
    if (!ce) traffic -= bytes(x);  // nll reads one score per sample
    call = [&, p, ce](dnn::Handle& h) {
      return ce ? dnn::softmax_cross_entropy_forward(h, p, x.desc, x.mem.data(), lab.desc, lab.mem.data(), l.desc, l.mem.data())
                : dnn::nll_loss_forward(h, p, x.desc, x.mem.data(), lab.desc, lab.mem.data(), l.desc, l.mem.data());
    };
    return;
  }
  Buffer& dx = bufs.emplace_back(dt, x.desc.dims, "dx", false);
  traffic += bytes(dx) - (ce ? 0 : bytes(x));  // nll's backward reads no scores
  call = [&, p, ce](dnn::Handle& h) {
    return ce ? dnn::softmax_cross_entropy_backward(h, p, x.desc, x.mem.data(), lab.desc, lab.mem.data(), l.desc, l.mem.data(), dx.desc, dx.mem.data())
              : dnn::nll_loss_backward(h, p, x.desc, lab.desc, lab.mem.data(), l.desc, l.mem.data(), dx.desc, dx.mem.data());
  };
}

// The inputs of a unary operation lie in its domain: a log over [-2, 2) would time the NaN
// path for half of them. So does pow's float base (its exponent keeps [-2, 2); integer bases
// keep the range, which fill_random scales into each integer type's).
std::pair<float, float> input_range(const std::string& op, DType t) {
  if (op == "log" || op == "sqrt" || op == "rsqrt" || (op == "pow" && is_floating(t))) return {1.0f / 64, 4.0f};
  if (op == "asin" || op == "acos") return {-1.0f, 1.0f};
  return {-2.0f, 2.0f};
}

void run(const TensorArgs& a, const BenchOptions& o, Kind kind) {
  const bool is_reduce = kind == Kind::kReduce;
  check_bench_options(o);
  const std::optional<DType> dt = parse_dtype(a.dtype);
  if (!dt) bad("--dtype: '" + a.dtype + "' is not a dtype");
  if (a.dims.empty()) bad("give --dims, e.g. --dims 4096x4096");
  Buffer x(*dt, dims_of("--dims", a.dims), "x", true, input_range(a.op, *dt));
  std::optional<Buffer> b, y;
  std::vector<Buffer> parts;
  std::function<Status(dnn::Handle&)> call;
  std::string what = "tessera bench dnn " + std::string(kind_name(kind)) + " --op " + a.op + " --dims " + a.dims;
  std::int64_t traffic = x.desc.numel() * static_cast<std::int64_t>(dtype_size(*dt));
  parts.reserve(2);
  if (kind == Kind::kMove && is_indexing(a.op)) {
    setup_indexing(a, *dt, x, parts, traffic, what, call);
  } else if (kind == Kind::kMove) {
    setup_move(a, *dt, x, y, parts, traffic, what, call);
  } else if (kind == Kind::kTrain) {
    setup_train(a, *dt, x, parts, traffic, what, call);
  } else if (is_reduce) {
    const auto op = dnn::parse_reduce(a.op);
    if (!op) bad("--op: '" + a.op + "' is not a reduction (sum, mean, prod, max, min, l1, l2, sum_square, log_sum, log_sum_exp)");
    std::vector<int> axes;
    for (std::int64_t v : dims_of("--axes", a.axes, -16)) axes.push_back(static_cast<int>(v));
    auto yd = dnn::reduce_output_desc(x.desc, axes, a.keepdims);
    if (!yd.is_ok()) bad(yd.status().message());
    y.emplace(*dt, yd.value().dims, "y", false);
    traffic += y->desc.numel() * static_cast<std::int64_t>(dtype_size(*dt));
    what += (a.axes.empty() ? "" : " --axes " + a.axes) + (a.keepdims ? " --keepdims" : "");
    call = [&, op, axes](dnn::Handle& h) { return dnn::reduce(h, *op, axes, a.keepdims, x.desc, x.mem.data(), y->desc, y->mem.data()); };
  } else if (kind == Kind::kEltwise && a.op == "where") {  // y = c ? x : b, c random bools shaped as x
    parts.emplace_back(DType::kBool, x.desc.dims, "c", true);
    b.emplace(*dt, a.dims_b.empty() ? x.desc.dims : dims_of("--dims-b", a.dims_b), "b", true);
    auto od = dnn::broadcast_dims(x.desc.dims, b->desc.dims);
    if (!od.is_ok()) bad(od.status().message());
    y.emplace(*dt, od.value(), "y", false);
    traffic += parts[0].desc.numel() + (b->desc.numel() + y->desc.numel()) * static_cast<std::int64_t>(dtype_size(*dt));
    if (!a.dims_b.empty()) what += " --dims-b " + a.dims_b;
    call = [&](dnn::Handle& h) {
      return dnn::where(h, parts[0].desc, parts[0].mem.data(), x.desc, x.mem.data(), b->desc, b->mem.data(), y->desc, y->mem.data());
    };
  } else if (const auto bop = dnn::parse_binary(a.op)) {
    b.emplace(*dt, a.dims_b.empty() ? x.desc.dims : dims_of("--dims-b", a.dims_b), "b", true);
    auto od = dnn::broadcast_dims(x.desc.dims, b->desc.dims);
    if (!od.is_ok()) bad(od.status().message());
    const bool cmp = *bop >= dnn::BinaryOp::kEqual && *bop <= dnn::BinaryOp::kGreaterEqual;
    y.emplace(cmp ? DType::kBool : *dt, od.value(), "y", false);
    traffic += b->desc.numel() * static_cast<std::int64_t>(dtype_size(*dt)) + y->desc.numel() * static_cast<std::int64_t>(dtype_size(y->desc.dtype));
    if (!a.dims_b.empty()) what += " --dims-b " + a.dims_b;
    call = [&, bop](dnn::Handle& h) { return dnn::binary(h, *bop, x.desc, x.mem.data(), b->desc, b->mem.data(), y->desc, y->mem.data()); };
  } else if (const auto uop = dnn::parse_unary(a.op)) {
    const bool pred = *uop == dnn::UnaryOp::kIsNan || *uop == dnn::UnaryOp::kIsInf;
    y.emplace(pred ? DType::kBool : *dt, x.desc.dims, "y", false);
    traffic += y->desc.numel() * static_cast<std::int64_t>(dtype_size(y->desc.dtype));
    call = [&, uop](dnn::Handle& h) { return dnn::unary(h, *uop, x.desc, x.mem.data(), y->desc, y->mem.data()); };
  } else {
    bad("--op: '" + a.op + "' is neither a binary nor a unary operation");
  }
  what += " --dtype " + a.dtype;
  // The copy: traffic / 2 bytes read and written, split over the pool's threads.
  const auto half = static_cast<std::size_t>(std::max<std::int64_t>(64, traffic / 2));
  AlignedBuffer src(half, "copy source"), dst(half, "copy target");
  std::memset(src.data(), 1, half);
  std::memset(dst.data(), 0, half);

  json rows = json::array();
  Table t({{"case", 56, true}, {"threads", 7}, {"tessera ms", 11}, {"copy ms", 9}, {"GB/s", 7}, {"copy GB/s", 10}, {"ratio", 6}});
  if (!o.json) t.print_header();
  for (int threads : thread_counts(o)) {
    use_threads(threads);
    dnn::Handle h;
    if (Status s = h.set_num_threads(threads); !s.is_ok()) throw CommandError{s.message(), 1};
    auto op = [&] {
      if (Status s = call(h); !s.is_ok()) throw CommandError{s.message(), 1};
    };
    auto copy = [&] {
      thread_pool().parallel_for(0, static_cast<std::int64_t>(half), 1 << 20, [&](std::int64_t b0, std::int64_t b1) {
        std::memcpy(static_cast<char*>(dst.data()) + b0, static_cast<const char*>(src.data()) + b0, static_cast<std::size_t>(b1 - b0));
      });
    };
    op();
    copy();
    const auto [ta, tc] = measure_alternating(op, copy, o, nullptr);
    const double gbs = static_cast<double>(traffic) / ta.best_s * 1e-9, cgbs = static_cast<double>(traffic) / tc.best_s * 1e-9;
    const std::string line = what + " --threads " + std::to_string(threads);
    if (o.json) {
      rows.push_back({{"command", line}, {"threads", threads}, {"bytes", traffic}, {"best_ms", ta.best_s * 1e3},
                      {"median_ms", ta.median_s * 1e3}, {"copy_best_ms", tc.best_s * 1e3}, {"gbs", gbs},
                      {"copy_gbs", cgbs}, {"ratio", gbs / cgbs}});
    } else {
      t.print_row({a.op + " " + a.dtype + " " + a.dims + (a.dims_b.empty() ? "" : " . " + a.dims_b) + (a.axes.empty() ? "" : " axes " + a.axes) + (a.perm.empty() ? "" : " perm " + a.perm) + (a.to.empty() ? "" : " to " + a.to),
                   std::to_string(threads), format_rate(ta.best_s * 1e3), format_rate(tc.best_s * 1e3),
                   format_rate(gbs), format_rate(cgbs), format_ratio(gbs / cgbs)});
    }
  }
  if (o.json) std::printf("%s\n", json{{"results", rows}}.dump(2).c_str());
}

}  // namespace

void add_tensor_commands(CLI::App& dnn) {
  for (const Kind kind : {Kind::kEltwise, Kind::kReduce, Kind::kMove, Kind::kTrain}) {
    const bool is_reduce = kind == Kind::kReduce;
    auto args = std::make_shared<TensorArgs>();
    auto opts = std::make_shared<BenchOptions>();
    CLI::App* cmd = dnn.add_subcommand(kind_name(kind),
                                       is_reduce ? "Reductions over axes against a memory copy of the same bytes"
                                       : kind == Kind::kMove ? "Data movement and indexing (transpose, cast, concat, split, pad, cumsum, gather, ..., top_k) against a memory copy of the bytes they must move"
                                       : kind == Kind::kTrain ? "Dropout and losses, forward or backward, against a memory copy of the same bytes"
                                                 : "Elementwise binary/unary operations against a memory copy of the same bytes");
    cmd->add_option("--op", args->op, is_reduce ? "sum, mean, prod, max, min, l1, l2, sum_square, log_sum, log_sum_exp"
                                      : kind == Kind::kMove ? "transpose, cast, copy, concat, split, pad, cumsum, gather, gather_elements, gather_nd, scatter_elements, scatter_nd, one_hot, top_k"
                                      : kind == Kind::kTrain ? "dropout, softmax_ce, nll, mse, l1, smooth_l1, bce_with_logits"
                                                 : "add, mul, ..., greater, ... (binary), exp, sqrt, ... (unary) or where (c ? x : b, c random)")->required();
    cmd->add_option("--dims", args->dims, "Dims of x (a): 4096x4096")->required();
    cmd->add_option("--dtype", args->dtype, "f32 (default), f64, f16, bf16, i8, u8, i32, i64, bool");
    if (is_reduce) {
      cmd->add_option("--axes", args->axes, "Reduced axes: 1 or 0x2 (default: all)");
      cmd->add_flag("--keepdims", args->keepdims, "Keep the reduced dims as 1");
    } else if (kind == Kind::kMove) {
      cmd->add_option("--perm", args->perm, "transpose: y dim i is x dim perm[i], e.g. 0x2x1 (default: reversed)");
      cmd->add_option("--to", args->to, "cast: the output dtype");
      cmd->add_option("--axis", args->axis, "concat/split: the axis x is cut in two along; cumsum: the axis summed; gather, scatter, top_k: the indexed axis (default 0)");
      cmd->add_option("--mode", args->mode, "pad: constant, reflect, edge (default) or wrap");
      cmd->add_option("--index-dims", args->index_dims, "gather: the indices' dims (default: x's dim along --axis); gather_elements, scatter_elements: (default: x's dims); gather_nd, scatter_nd: the indices' dims, the last one the tuples' length");
      cmd->add_option("--batch-dims", args->batch_dims, "gather_nd: the leading dims x and the indices share (default 0)");
      cmd->add_option("--reduce", args->reduce, "scatter_elements, scatter_nd: none (default), add, mul, max or min");
      cmd->add_option("--k", args->k, "top_k: how many (default 8)");
      cmd->add_option("--depth", args->depth, "one_hot: the classes (default 1000); --dims are the indices' dims");
    } else if (kind == Kind::kTrain) {
      cmd->add_option("--dir", args->dir, "fwd (default) or bwd");
      cmd->add_option("--reduction", args->reduction, "Losses: none, sum or mean (default)");
      cmd->add_option("--ratio", args->ratio, "dropout: the dropped fraction (default 0.1)");
      cmd->add_option("--smoothing", args->smoothing, "softmax_ce: label smoothing (default 0)");
    } else {
      cmd->add_option("--dims-b", args->dims_b, "Dims of b, broadcast against a (default: a's)");
    }
    add_bench_options(cmd, *opts);
    cmd->callback([args, opts, kind] { run(*args, *opts, kind); });
  }
}

}  // namespace tessera::cli::dnn_bench
