// preferred_conv_layout (dnn.hpp): which activation layout a forward convolution should be
// given, from Find mode's measurements where both layouts have them, else from the heuristic.
#include <cstdio>

#include "impls.hpp"

namespace tessera::dnn {
namespace {

std::string us_text(double us) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f us", us);
  return b;
}

}  // namespace

Result<LayoutChoice> preferred_conv_layout(Handle& h, const ConvDesc& c, DType dtype,
                                           const std::vector<std::int64_t>& x_dims,
                                           const std::vector<std::int64_t>& w_dims) {
  struct Side {
    Layout layout;
    TensorDesc x, w, y;
    std::string signature;
  };
  Side side[2] = {{Layout::kNCHW, {}, {}, {}, {}}, {Layout::kNHWC, {}, {}, {}, {}}};
  for (Side& s : side) {
    s.x = TensorDesc::make(dtype, x_dims, s.layout);
    s.w = TensorDesc::make(dtype, w_dims, s.layout);
    TESSERA_ASSIGN_OR_RETURN(const TensorDesc y, conv_output_desc(c, s.x, s.w));
    s.y = TensorDesc::make(dtype, y.dims, s.layout);
    s.signature = conv_signature(ConvDir::kForward, c, s.x, s.w, s.y);
  }
  const std::optional<double> t_nchw = conv::tuned_time_us(h, side[0].signature);
  const std::optional<double> t_nhwc = conv::tuned_time_us(h, side[1].signature);
  if (t_nchw && t_nhwc) {
    const bool nhwc = *t_nhwc <= *t_nchw;
    return LayoutChoice{nhwc ? Layout::kNHWC : Layout::kNCHW,
                        "tuning database: nhwc " + us_text(*t_nhwc) + ", nchw " + us_text(*t_nchw)};
  }
  ConvChoice choice[2];
  for (int i = 0; i < 2; ++i) {
    TESSERA_ASSIGN_OR_RETURN(choice[i], choose_convolution(h, ConvDir::kForward, c, side[i].x, side[i].w, side[i].y));
  }
  const std::string both = "nhwc " + choice[1].impl + ", nchw " + choice[0].impl;
  if (choice[1].algo == ConvAlgo::kReference && choice[0].algo != ConvAlgo::kReference)
    return LayoutChoice{Layout::kNCHW, "heuristic: only the reference in nhwc (" + both + ")"};
  return LayoutChoice{Layout::kNHWC, "heuristic: " + both};
}

}  // namespace tessera::dnn
