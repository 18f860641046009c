// Scalar definitions of every activation, forward and derivative, in f32 (f64 inside where
// it matters for accuracy). The reference implementation, the conv post-op epilogue and the
// tails of the vectorised kernels all use these.
#pragma once

#include <cmath>

#include "tessera/dnn.hpp"

namespace tessera::dnn::act {

// Below -80, sigmoid x = e^x to within e^-80 relative; 1 / (1 + e^-x) would give 0 from
// x = -88.7 on, where f32 (and bf16) still hold the result down to x = -103.3.
inline float sigmoid(float x) {
  return x < -80.0f ? std::exp(x) : 1.0f / (1.0f + std::exp(-x));
}
inline float softplus(float x) {  // log(1 + e^x) without overflow
  return x > 20.0f ? x : (x < -20.0f ? std::exp(x) : std::log1p(std::exp(x)));
}

inline float forward(const Activation& a, float x) {
  switch (a.kind) {
    case ActKind::kIdentity:
      return x;
    case ActKind::kRelu:
      return x > 0.0f ? x : 0.0f;
    case ActKind::kLeakyRelu:
      return x > 0.0f ? x : a.alpha * x;
    case ActKind::kElu:
      return x > 0.0f ? x : a.alpha * std::expm1(x);
    case ActKind::kSelu:
      return a.beta * (x > 0.0f ? x : a.alpha * std::expm1(x));
    case ActKind::kCelu:
      return x > 0.0f ? x : a.alpha * std::expm1(x / a.alpha);
    case ActKind::kSigmoid:
      return sigmoid(x);
    case ActKind::kHardSigmoid:
      return std::fmax(0.0f, std::fmin(1.0f, a.alpha * x + a.beta));
    case ActKind::kTanh:
      return std::tanh(x);
    case ActKind::kGeluErf:
      return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case ActKind::kGeluTanh:
      return 0.5f * x * (1.0f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    case ActKind::kSilu:
      return x * sigmoid(x);
    case ActKind::kMish:
      return x * std::tanh(softplus(x));
    case ActKind::kSoftplus:
      return softplus(x);
    case ActKind::kSoftsign:
      return x / (1.0f + std::fabs(x));
    case ActKind::kClip:
      return std::fmin(std::fmax(x, a.alpha), a.beta);
    case ActKind::kHardSwish:
      return x * std::fmin(std::fmax(x + 3.0f, 0.0f), 6.0f) / 6.0f;
    case ActKind::kAbs:
      return std::fabs(x);
  }
  return x;
}

// d f / d x at x. At kinks (relu at 0, clip at its bounds, abs at 0) the derivative of the
// side PyTorch uses: relu'(0) = 0, clip' = 1 strictly inside (alpha, beta), abs'(0) = 0.
inline float derivative(const Activation& a, float x) {
  switch (a.kind) {
    case ActKind::kIdentity:
      return 1.0f;
    case ActKind::kRelu:
      return x > 0.0f ? 1.0f : 0.0f;
    case ActKind::kLeakyRelu:
      return x > 0.0f ? 1.0f : a.alpha;
    case ActKind::kElu:
      return x > 0.0f ? 1.0f : a.alpha * std::exp(x);
    case ActKind::kSelu:
      return a.beta * (x > 0.0f ? 1.0f : a.alpha * std::exp(x));
    case ActKind::kCelu:
      return x > 0.0f ? 1.0f : std::exp(x / a.alpha);
    case ActKind::kSigmoid: {
      float s = sigmoid(x);
      return s * (1.0f - s);
    }
    case ActKind::kHardSigmoid: {
      float v = a.alpha * x + a.beta;
      return (v > 0.0f && v < 1.0f) ? a.alpha : 0.0f;
    }
    case ActKind::kTanh: {
      float t = std::tanh(x);
      return 1.0f - t * t;
    }
    case ActKind::kGeluErf:
      return 0.5f * (1.0f + std::erf(x * 0.70710678118654752f)) +
             x * 0.39894228040143268f * std::exp(-0.5f * x * x);
    case ActKind::kGeluTanh: {
      const float c = 0.79788456080286536f;
      float u = c * (x + 0.044715f * x * x * x);
      float t = std::tanh(u);
      return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * 0.044715f * x * x);
    }
    case ActKind::kSilu: {
      float s = sigmoid(x);
      return s * (1.0f + x * (1.0f - s));
    }
    case ActKind::kMish: {
      float sp = softplus(x);
      float t = std::tanh(sp);
      return t + x * (1.0f - t * t) * sigmoid(x);
    }
    case ActKind::kSoftplus:
      return sigmoid(x);
    case ActKind::kSoftsign: {
      float d = 1.0f + std::fabs(x);
      return 1.0f / (d * d);
    }
    case ActKind::kClip:
      return (x > a.alpha && x < a.beta) ? 1.0f : 0.0f;
    case ActKind::kHardSwish:
      return x < -3.0f ? 0.0f : (x > 3.0f ? 1.0f : (2.0f * x + 3.0f) / 6.0f);
    case ActKind::kAbs:
      return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
  }
  return 1.0f;
}

}  // namespace tessera::dnn::act
