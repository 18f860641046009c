// `tessera bench dnn conv ...` (one convolution, options as TESSERA_LOG=bench prints them) and
// `tessera bench dnn [conv] --suite resnet50|mobilenet_v2` (every distinct convolution of the
// network at batch 1 and 8, with total rows). oneDNN gets format_tag::any for every tensor
// (its own blocked layouts, inputs reordered untimed, as benchdnn does); tessera runs in the
// layout given (the suites: NHWC unless --layout says otherwise).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include "bench_dnn.hpp"
#include "commands.hpp"

namespace tessera::cli::dnn_bench {
namespace {

using nlohmann::json;

// ---- The suites --------------------------------------------------------------------------

// ResNet-50 v1.5 (the stride of each stage's first block on its 3x3 convolution), 224x224.
// Names follow the Caffe model; a shape that recurs is named after its first layer.
const std::vector<ConvShape> kResnet50 = {
    // layer            ic    oc   in  k  s  p  g  count
    {"conv1", 3, 64, 224, 7, 2, 3, 1, 1},
    {"res2a_branch2a", 64, 64, 56, 1, 1, 0, 1, 1},
    {"res2a_branch2b", 64, 64, 56, 3, 1, 1, 1, 3},
    {"res2a_branch2c", 64, 256, 56, 1, 1, 0, 1, 4},  // and res2a_branch1
    {"res2b_branch2a", 256, 64, 56, 1, 1, 0, 1, 2},
    {"res3a_branch2a", 256, 128, 56, 1, 1, 0, 1, 1},
    {"res3a_branch2b", 128, 128, 56, 3, 2, 1, 1, 1},
    {"res3a_branch2c", 128, 512, 28, 1, 1, 0, 1, 4},
    {"res3a_branch1", 256, 512, 56, 1, 2, 0, 1, 1},
    {"res3b_branch2a", 512, 128, 28, 1, 1, 0, 1, 3},
    {"res3b_branch2b", 128, 128, 28, 3, 1, 1, 1, 3},
    {"res4a_branch2a", 512, 256, 28, 1, 1, 0, 1, 1},
    {"res4a_branch2b", 256, 256, 28, 3, 2, 1, 1, 1},
    {"res4a_branch2c", 256, 1024, 14, 1, 1, 0, 1, 6},
    {"res4a_branch1", 512, 1024, 28, 1, 2, 0, 1, 1},
    {"res4b_branch2a", 1024, 256, 14, 1, 1, 0, 1, 5},
    {"res4b_branch2b", 256, 256, 14, 3, 1, 1, 1, 5},
    {"res5a_branch2a", 1024, 512, 14, 1, 1, 0, 1, 1},
    {"res5a_branch2b", 512, 512, 14, 3, 2, 1, 1, 1},
    {"res5a_branch2c", 512, 2048, 7, 1, 1, 0, 1, 3},
    {"res5a_branch1", 1024, 2048, 14, 1, 2, 0, 1, 1},
    {"res5b_branch2a", 2048, 512, 7, 1, 1, 0, 1, 2},
    {"res5b_branch2b", 512, 512, 7, 3, 1, 1, 1, 2},
};

// MobileNet-V2 (width 1.0, 224x224, torchvision padding): the stem, 17 inverted-residual
// blocks b1..b17 (1x1 expansion, 3x3 depthwise with stride 1 or 2, 1x1 projection) and the
// 1x1 head. A shape that recurs is named after its first block.
const std::vector<ConvShape> kMobilenetV2 = {
    // layer         ic    oc   in  k  s  p  g    count
    {"stem", 3, 32, 224, 3, 2, 1, 1, 1},         {"b1_dw", 32, 32, 112, 3, 1, 1, 32, 1},
    {"b1_project", 32, 16, 112, 1, 1, 0, 1, 1},  {"b2_expand", 16, 96, 112, 1, 1, 0, 1, 1},
    {"b2_dw", 96, 96, 112, 3, 2, 1, 96, 1},      {"b2_project", 96, 24, 56, 1, 1, 0, 1, 1},
    {"b3_expand", 24, 144, 56, 1, 1, 0, 1, 2},   {"b3_dw", 144, 144, 56, 3, 1, 1, 144, 1},
    {"b3_project", 144, 24, 56, 1, 1, 0, 1, 1},  {"b4_dw", 144, 144, 56, 3, 2, 1, 144, 1},
    {"b4_project", 144, 32, 28, 1, 1, 0, 1, 1},  {"b5_expand", 32, 192, 28, 1, 1, 0, 1, 3},
    {"b5_dw", 192, 192, 28, 3, 1, 1, 192, 2},    {"b5_project", 192, 32, 28, 1, 1, 0, 1, 2},
    {"b7_dw", 192, 192, 28, 3, 2, 1, 192, 1},    {"b7_project", 192, 64, 14, 1, 1, 0, 1, 1},
    {"b8_expand", 64, 384, 14, 1, 1, 0, 1, 4},   {"b8_dw", 384, 384, 14, 3, 1, 1, 384, 4},
    {"b8_project", 384, 64, 14, 1, 1, 0, 1, 3},  {"b11_project", 384, 96, 14, 1, 1, 0, 1, 1},
    {"b12_expand", 96, 576, 14, 1, 1, 0, 1, 3},  {"b12_dw", 576, 576, 14, 3, 1, 1, 576, 2},
    {"b12_project", 576, 96, 14, 1, 1, 0, 1, 2}, {"b14_dw", 576, 576, 14, 3, 2, 1, 576, 1},
    {"b14_project", 576, 160, 7, 1, 1, 0, 1, 1}, {"b15_expand", 160, 960, 7, 1, 1, 0, 1, 3},
    {"b15_dw", 960, 960, 7, 3, 1, 1, 960, 3},    {"b15_project", 960, 160, 7, 1, 1, 0, 1, 2},
    {"b17_project", 960, 320, 7, 1, 1, 0, 1, 1}, {"head", 320, 1280, 7, 1, 1, 0, 1, 1},
};

// ---- Options -----------------------------------------------------------------------------

struct ConvArgs {
  std::string dir = "fwd", dtype = "f32", layout, mb, in, kernel, stride, dilation, pad_begin,
              pad_end, pad, algo = "auto", suite, layers;
  std::int64_t ic = 0, oc = 0, groups = 1;
  bool list = false;
  std::map<std::string, CLI::Option*> options;
  bool given(const std::string& flag) const {
    auto it = options.find(flag);
    return it != options.end() && it->second->count() > 0;
  }
};

// Flags that describe one problem (a suite brings its own).
constexpr const char* kShapeFlags[] = {"--ic",      "--oc",       "--in",  "--kernel",
                                       "--stride",  "--dilation", "--pad", "--pad-begin",
                                       "--pad-end", "--groups"};

dnn::ConvDir parse_dir(const std::string& text) {
  for (dnn::ConvDir d :
       {dnn::ConvDir::kForward, dnn::ConvDir::kBackwardData, dnn::ConvDir::kBackwardWeights})
    if (text == dnn::dir_name(d)) return d;
  bad("--dir: '" + text + "' is not fwd, bwd-data or bwd-weights");
}

dnn::ConvAlgo parse_conv_algo(const std::string& text) {
  if (auto a = dnn::parse_algo(text)) return *a;
  bad("--algo: '" + text +
      "' is not one of auto, direct, im2col, gemm1x1, winograd_f2x3, winograd_f4x3, depthwise, "
      "fft, reference");
}

std::int64_t parse_mb(const std::string& text) {
  const std::vector<std::int64_t> v = parse_batches(text);
  if (v.size() != 1) bad("--mb: one batch size for a single convolution, got '" + text + "'");
  return v[0];
}

// A per-spatial-dim option: `rank` values (a single value is repeated), or `dflt` when absent.
std::vector<std::int64_t> spatial(const ConvArgs& a, const char* flag, const std::string& text,
                                  std::size_t rank, std::int64_t dflt, std::int64_t min) {
  if (!a.given(flag)) return std::vector<std::int64_t>(rank, dflt);
  std::vector<std::int64_t> v = parse_dims(flag, text, min);
  if (v.size() == 1 && rank > 1) v.assign(rank, v[0]);
  if (v.size() != rank)
    bad(std::string(flag) + " " + text + " has " + std::to_string(v.size()) + " values but --in " +
        a.in + " has " + std::to_string(rank) + " spatial dims");
  return v;
}

ConvProblem resolve(const ConvArgs& a) {
  for (const char* f : {"--ic", "--oc", "--in", "--kernel"})
    if (!a.given(f))
      bad(std::string("conv needs ") + f +
          " (e.g. --mb 1 --ic 64 --oc 64 --in 56x56 --kernel 3x3), or --suite");
  ConvProblem p;
  p.dir = parse_dir(a.dir);
  p.dtype = parse_dnn_dtype(a.dtype);
  p.layout = parse_layout(a.layout.empty() ? "nchw" : a.layout);
  p.algo = parse_conv_algo(a.algo);
  p.mb = a.given("--mb") ? parse_mb(a.mb) : 1;
  if (a.ic < 1 || a.oc < 1) bad("--ic and --oc must be >= 1");
  if (a.groups < 1) bad("--groups = " + std::to_string(a.groups) + " must be >= 1");
  p.ic = a.ic, p.oc = a.oc, p.groups = a.groups;
  p.in = parse_dims("--in", a.in, 1);
  const std::size_t rank = p.in.size();
  if (rank > 3) bad("--in " + a.in + ": 1 to 3 spatial dims");
  p.kernel = spatial(a, "--kernel", a.kernel, rank, 1, 1);
  p.stride = spatial(a, "--stride", a.stride, rank, 1, 1);
  p.dilation = spatial(a, "--dilation", a.dilation, rank, 1, 1);
  if (a.given("--pad") && (a.given("--pad-begin") || a.given("--pad-end")))
    bad("give --pad (both sides) or --pad-begin/--pad-end, not both");
  if (a.given("--pad")) {
    std::vector<std::int64_t> v = parse_dims("--pad", a.pad, 0);
    if (v.size() == 1) v.assign(rank, v[0]);
    if (v.size() == rank) v.insert(v.end(), v.begin(), v.end());  // symmetric
    if (v.size() != 2 * rank)
      bad("--pad " + a.pad + ": give " + std::to_string(rank) + " values (both sides) or " +
          std::to_string(2 * rank) + " (begin then end)");
    p.pad_begin.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank));
    p.pad_end.assign(v.begin() + static_cast<std::ptrdiff_t>(rank), v.end());
  } else {
    p.pad_begin = spatial(a, "--pad-begin", a.pad_begin, rank, 0, 0);
    p.pad_end = spatial(a, "--pad-end", a.pad_end, rank, 0, 0);
  }
  if (p.ic % p.groups != 0 || p.oc % p.groups != 0)
    bad("--groups " + std::to_string(p.groups) + " must divide --ic " + std::to_string(p.ic) +
        " and --oc " + std::to_string(p.oc));
  p.y_desc();  // the output must exist
  return p;
}

json args_json(const ConvProblem& p) {
  return {{"dir", dnn::dir_name(p.dir)},
          {"layout", dnn::layout_name(p.layout)},
          {"mb", p.mb},
          {"ic", p.ic},
          {"oc", p.oc},
          {"in", p.in},
          {"kernel", p.kernel},
          {"stride", p.stride},
          {"dilation", p.dilation},
          {"pad_begin", p.pad_begin},
          {"pad_end", p.pad_end},
          {"groups", p.groups},
          {"algo", dnn::algo_name(p.algo)}};
}

void plan_conv(const ConvProblem& cp, dnn::Handle& h, bool anchor, Plan& p) {
  const dnn::ConvDesc desc = cp.desc();
  const dnn::TensorDesc xd = cp.x_desc(), wd = cp.w_desc(), yd = cp.y_desc();
  p.work = cp.flops();
  p.tolerance = cp.dtype == DType::kF32 ? 2e-3 : 3e-2;
  if (cp.algo == dnn::ConvAlgo::kAuto) {
    auto choice = dnn::choose_convolution(h, cp.dir, desc, xd, wd, yd);
    if (!choice.is_ok()) throw CommandError{choice.status().message(), 1};
    p.algo = std::string(dnn::algo_name(choice->algo));
    p.info = {{"impl", choice->impl}, {"source", choice->source}};
    if (choice->source == "tune-db") p.algo += "*";
  } else {
    p.algo = std::string(dnn::algo_name(cp.algo));
    p.info = {{"source", "requested"}};
  }
  const DType dt = cp.dtype;
  const dnn::ConvAlgo algo = cp.algo;
  onednn::ConvSpec spec;
  spec.dir = cp.dir;
  spec.groups = cp.groups;
  spec.stride = cp.stride, spec.dilation = cp.dilation;
  spec.pad_begin = cp.pad_begin, spec.pad_end = cp.pad_end;
  switch (cp.dir) {
    case dnn::ConvDir::kForward: {
      const void* x = p.random(dt, xd.span(), "x");
      const void* w = p.random(dt, wd.span(), "w");
      void* y = p.alloc(dt, yd.span(), "y");
      // Planned once, like oneDNN's primitive with its weights reordered outside the timing.
      auto plan = dnn::ConvForwardPlan::create(h, desc, xd, wd, w, yd, algo);
      if (!plan.is_ok()) throw CommandError{plan.status().message(), 1};
      p.tessera = [&h, plan = *plan, x, y] { return plan.run(h, x, y); };
      if (!anchor) return;
      void* ya = p.alloc(dt, yd.span(), "oneDNN's y");
      spec.x = onednn::tensor(xd, x), spec.w = onednn::tensor(wd, w);
      spec.y = onednn::tensor(yd, ya);
      p.check("y", y, ya, dt, yd.span());
      break;
    }
    case dnn::ConvDir::kBackwardData: {
      const void* w = p.random(dt, wd.span(), "w");
      const void* dy = p.random(dt, yd.span(), "dy");
      void* dx = p.alloc(dt, xd.span(), "dx");
      p.tessera = [&h, desc, xd, wd, yd, w, dy, dx, algo] {
        return dnn::conv_backward_data(h, desc, wd, w, yd, dy, xd, dx, algo);
      };
      if (!anchor) return;
      void* dxa = p.alloc(dt, xd.span(), "oneDNN's dx");
      spec.w = onednn::tensor(wd, w), spec.y = onednn::tensor(yd, dy);
      spec.x = onednn::tensor(xd, dxa);
      p.check("dx", dx, dxa, dt, xd.span());
      break;
    }
    case dnn::ConvDir::kBackwardWeights: {
      const void* x = p.random(dt, xd.span(), "x");
      const void* dy = p.random(dt, yd.span(), "dy");
      void* dw = p.alloc(dt, wd.span(), "dw");
      p.tessera = [&h, desc, xd, wd, yd, x, dy, dw, algo] {
        return dnn::conv_backward_weights(h, desc, xd, x, yd, dy, wd, dw, nullptr, algo);
      };
      if (!anchor) return;
      void* dwa = p.alloc(dt, wd.span(), "oneDNN's dw");
      spec.x = onednn::tensor(xd, x), spec.y = onednn::tensor(yd, dy);
      spec.w = onednn::tensor(wd, dwa);
      p.check("dw", dw, dwa, dt, wd.span());
      break;
    }
  }
  auto made = onednn::make_conv(spec);
  if (made.is_ok())
    p.anchor = std::move(made).value();
  else
    p.anchor_missing = made.status().message();
}

Case conv_case(const ConvProblem& cp) {
  Case c;
  c.primitive = "conv";
  c.shape = cp.shape();
  c.dtype = cp.dtype;
  c.command = cp.command();
  c.args = args_json(cp);
  c.plan = [cp](dnn::Handle& h, bool anchor, Plan& p) { plan_conv(cp, h, anchor, p); };
  return c;
}

void list_suite(const std::vector<Case>& cases, bool json_out) {
  json rows = json::array();
  int layers = 0;
  for (const Case& c : cases) {
    if (json_out) {
      rows.push_back({{"layer", c.layer},
                      {"group", c.group},
                      {"count", c.count},
                      {"shape", c.shape},
                      {"command", c.command},
                      {"args", c.args}});
      continue;
    }
    std::printf("%-14s x%-2d  %-34s %s\n", c.layer.c_str(), c.count, c.shape.c_str(),
                c.command.c_str());
    layers += c.count;
    const bool last_of_group = &c == &cases.back() || (&c + 1)->group != c.group;
    if (last_of_group) {
      std::printf("%s: %d layers\n", c.group.c_str(), layers);
      layers = 0;
    }
  }
  if (json_out) std::printf("%s\n", json{{"cases", rows}}.dump(2).c_str());
}

void run_suite(const ConvArgs& a, const BenchOptions& o) {
  const std::vector<ConvShape>* all = suite_shapes(a.suite);
  if (all == nullptr) bad("--suite: unknown suite '" + a.suite + "' (" + suite_names() + ")");
  for (const char* f : kShapeFlags)
    if (a.given(f)) bad(std::string("--suite brings its own shapes: give no ") + f);
  const std::vector<ConvShape> selected = select_layers(*all, a.suite, a.layers);
  const std::vector<ConvShape>* shapes = &selected;
  const dnn::ConvDir dir = parse_dir(a.dir);
  const DType dtype = parse_dnn_dtype(a.dtype);
  const dnn::Layout layout = parse_layout(a.layout.empty() ? "nhwc" : a.layout);
  const dnn::ConvAlgo algo = parse_conv_algo(a.algo);
  const std::vector<std::int64_t> batches =
      a.given("--mb") ? parse_batches(a.mb) : std::vector<std::int64_t>{1, 8};
  std::vector<Case> cases;
  for (std::int64_t mb : batches) {
    for (const ConvShape& s : *shapes) {
      Case c = conv_case(suite_problem(s, mb, dir, dtype, layout, algo));
      c.layer = s.layer;
      c.count = s.count;
      c.group = a.suite + " " + std::string(dnn::dir_name(dir)) + " mb" + std::to_string(mb);
      cases.push_back(std::move(c));
    }
  }
  if (a.list) return list_suite(cases, o.json);
  run_cases(cases, o, true);
}

void run_conv(const ConvArgs& a, const BenchOptions& o) {
  if (!a.suite.empty()) return run_suite(a, o);
  if (!a.layers.empty() || a.list) bad("--layer and --list go with --suite");
  run_cases({conv_case(resolve(a))}, o, false);
}

// The options of a suite run (also taken by `bench dnn` itself: `bench dnn --suite resnet50`).
void add_suite_options(CLI::App* cmd, ConvArgs& a, bool single) {
  cmd->add_option(
      "--suite", a.suite,
      "Every distinct convolution of a network: " + suite_names() + " (batch 1 and 8 unless --mb)");
  auto& o = a.options;
  o["--dir"] = cmd->add_option("--dir", a.dir, "fwd (default), bwd-data or bwd-weights");
  o["--dtype"] = cmd->add_option("--dtype", a.dtype, "f32 (default), bf16 or f16");
  o["--layout"] = cmd->add_option(
      "--layout", a.layout,
      std::string("Activations nchw or nhwc (weights oihw or ohwi to match); default ") +
          (single ? "nchw (suites: nhwc)" : "nhwc"));
  o["--mb"] = cmd->add_option("--mb", a.mb,
                              single ? "Batch size (default 1); suites: a list (default 1,8)"
                                     : "Batch sizes (default 1,8)");
  cmd->add_option("--layer", a.layers,
                  "Suites: only these layers (a list of names, as --list shows them)");
  cmd->add_flag("--list", a.list, "Suites: print the layers and their replay lines, run nothing");
  o["--algo"] = cmd->add_option(
      "--algo", a.algo,
      "auto (default: the tuning database, else the heuristic), direct, im2col, gemm1x1, "
      "winograd_f2x3, winograd_f4x3, depthwise, fft, reference");
}

}  // namespace

// ---- ConvProblem -------------------------------------------------------------------------

dnn::ConvDesc ConvProblem::desc() const {
  return dnn::ConvDesc{stride, dilation, pad_begin, pad_end, groups};
}

dnn::TensorDesc ConvProblem::x_desc() const {
  std::vector<std::int64_t> d = {mb, ic};
  d.insert(d.end(), in.begin(), in.end());
  return dnn::TensorDesc::make(dtype, d, layout);
}

dnn::TensorDesc ConvProblem::w_desc() const {
  std::vector<std::int64_t> d = {oc, ic / groups};
  d.insert(d.end(), kernel.begin(), kernel.end());
  return dnn::TensorDesc::make(dtype, d, layout);
}

dnn::TensorDesc ConvProblem::y_desc() const {
  auto y = dnn::conv_output_desc(desc(), x_desc(), w_desc());
  if (!y.is_ok()) throw CommandError{y.status().message(), 2};
  if (y->numel() == 0) throw CommandError{"conv: the output " + y->to_string() + " is empty", 2};
  return std::move(y).value();
}

std::string ConvProblem::command() const {
  std::string s = "tessera bench dnn conv --dir " + std::string(dnn::dir_name(dir)) + " --dtype " +
                  std::string(dtype_name(dtype)) + " --layout " +
                  std::string(dnn::layout_name(layout)) + " --mb " + std::to_string(mb) + " --ic " +
                  std::to_string(ic) + " --oc " + std::to_string(oc) + " --in " + join_dims(in) +
                  " --kernel " + join_dims(kernel) + " --stride " + join_dims(stride) +
                  " --dilation " + join_dims(dilation) + " --pad-begin " + join_dims(pad_begin) +
                  " --pad-end " + join_dims(pad_end) + " --groups " + std::to_string(groups) +
                  " --algo " + std::string(dnn::algo_name(algo));
  return s;
}

std::string ConvProblem::shape() const {
  auto all = [](const std::vector<std::int64_t>& v, std::int64_t x) {
    return std::all_of(v.begin(), v.end(), [x](std::int64_t e) { return e == x; });
  };
  std::string s = "mb" + std::to_string(mb) + " ic" + std::to_string(ic) + " oc" +
                  std::to_string(oc) + " " + join_dims(in) + " k" + join_dims(kernel);
  if (!all(stride, 1)) s += " s" + join_dims(stride);
  if (!all(dilation, 1)) s += " d" + join_dims(dilation);
  if (pad_begin != pad_end)
    s += " p" + join_dims(pad_begin) + "/" + join_dims(pad_end);
  else if (!all(pad_begin, 0))
    s += " p" + join_dims(pad_begin);
  if (groups != 1) s += " g" + std::to_string(groups);
  return s;
}

double ConvProblem::flops() const {
  const dnn::TensorDesc y = y_desc();
  double out = 1, taps = 1;
  for (std::size_t i = 2; i < y.dims.size(); ++i) out *= static_cast<double>(y.dims[i]);
  for (std::int64_t k : kernel) taps *= static_cast<double>(k);
  return 2.0 * static_cast<double>(mb) * static_cast<double>(oc) * out *
         static_cast<double>(ic / groups) * taps;
}

const std::vector<ConvShape>* suite_shapes(std::string_view suite) {
  if (suite == "resnet50") return &kResnet50;
  if (suite == "mobilenet_v2") return &kMobilenetV2;
  return nullptr;
}

std::string suite_names() {
  return "resnet50, mobilenet_v2";
}

ConvProblem suite_problem(const ConvShape& s, std::int64_t mb, dnn::ConvDir dir, DType dtype,
                          dnn::Layout layout, dnn::ConvAlgo algo) {
  ConvProblem p;
  p.dir = dir, p.dtype = dtype, p.layout = layout, p.algo = algo;
  p.mb = mb, p.ic = s.ic, p.oc = s.oc, p.groups = s.groups;
  p.in = {s.in, s.in};
  p.kernel = {s.kernel, s.kernel};
  p.stride = {s.stride, s.stride};
  p.dilation = {1, 1};
  p.pad_begin = p.pad_end = {s.pad, s.pad};
  return p;
}

std::vector<ConvShape> select_layers(const std::vector<ConvShape>& shapes, const std::string& suite,
                                     const std::string& names) {
  if (names.empty()) return shapes;
  std::vector<ConvShape> out;
  std::stringstream ss(names);
  for (std::string name; std::getline(ss, name, ',');) {
    auto it = std::find_if(shapes.begin(), shapes.end(),
                           [&](const ConvShape& s) { return name == s.layer; });
    if (it == shapes.end()) {
      std::string known;
      for (const ConvShape& s : shapes) known += (known.empty() ? "" : ", ") + std::string(s.layer);
      bad("--layer: " + suite + " has no layer '" + name + "' (" + known + ")");
    }
    out.push_back(*it);
  }
  return out;
}

std::vector<std::int64_t> parse_batches(const std::string& text) {
  std::vector<std::int64_t> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno != 0 || v < 1 || v > (1 << 20))
      bad("--mb: '" + item + "' is not a batch size >= 1");
    out.push_back(v);
  }
  if (out.empty()) bad("--mb needs a batch size");
  return out;
}

void add_conv_command(CLI::App& dnn) {
  auto args = std::make_shared<ConvArgs>();
  auto opts = std::make_shared<BenchOptions>();
  CLI::App* cmd = dnn.add_subcommand(
      "conv", "Convolution (fwd, bwd-data, bwd-weights) or a network's convolutions (--suite)");
  add_suite_options(cmd, *args, true);
  auto& o = args->options;
  o["--ic"] = cmd->add_option("--ic", args->ic, "Input channels");
  o["--oc"] = cmd->add_option("--oc", args->oc, "Output channels");
  o["--in"] = cmd->add_option("--in", args->in, "Input spatial size: 56x56 (1 to 3 dims)");
  o["--kernel"] = cmd->add_option("--kernel", args->kernel, "Kernel size: 3x3");
  o["--stride"] = cmd->add_option("--stride", args->stride, "Stride (default 1)");
  o["--dilation"] = cmd->add_option("--dilation", args->dilation, "Dilation (default 1: none)");
  o["--pad"] = cmd->add_option("--pad", args->pad,
                               "Padding on both sides (1x1), or begin then end (1x1x0x0)");
  o["--pad-begin"] = cmd->add_option("--pad-begin", args->pad_begin, "Leading padding (default 0)");
  o["--pad-end"] = cmd->add_option("--pad-end", args->pad_end, "Trailing padding (default 0)");
  o["--groups"] = cmd->add_option("--groups", args->groups, "Groups (default 1; ic for depthwise)");
  add_dnn_bench_options(cmd, *opts);
  cmd->callback([args, opts] { run_conv(*args, *opts); });

  // `tessera bench dnn --suite resnet50 ...` without naming conv.
  auto suite_args = std::make_shared<ConvArgs>();
  auto suite_opts = std::make_shared<BenchOptions>();
  dnn.require_subcommand(0, 1);
  add_suite_options(&dnn, *suite_args, false);
  add_dnn_bench_options(&dnn, *suite_opts);
  CLI::App* parent = &dnn;
  dnn.callback([parent, suite_args, suite_opts] {
    if (!parent->get_subcommands().empty()) return;
    if (suite_args->suite.empty())
      bad("bench dnn: name a primitive (conv, pool, act, softmax, norm) or give --suite (" +
          suite_names() + ")");
    run_suite(*suite_args, *suite_opts);
  });
}

}  // namespace tessera::cli::dnn_bench
