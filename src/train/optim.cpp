// Optimisers (train.hpp): SGD with momentum, Nesterov and weight decay; AdamW.
#include <algorithm>
#include <cmath>

#include "tessera/train.hpp"

namespace tessera::train {

Result<Optimizer> Optimizer::create(const OptimizerOptions& o) {
  if (o.kind != "sgd" && o.kind != "adamw") return invalid_argument("optimizer: '" + o.kind + "' (sgd or adamw)");
  if (!(o.lr >= 0) || !(o.momentum >= 0) || !(o.weight_decay >= 0) || !(o.beta1 >= 0 && o.beta1 < 1) || !(o.beta2 >= 0 && o.beta2 < 1) || !(o.eps > 0))
    return invalid_argument("optimizer: lr, momentum and weight_decay must be >= 0, beta1 and beta2 in [0, 1), eps > 0");
  if (o.nesterov && o.momentum == 0) return invalid_argument("optimizer: Nesterov needs momentum");
  return Optimizer(o);
}

Status Optimizer::step(std::vector<Tensor>& params, const std::vector<Tensor>& grads) {
  if (params.size() != grads.size()) return invalid_argument("optimizer: " + std::to_string(params.size()) + " parameters, " + std::to_string(grads.size()) + " gradients");
  if (t_ > 0 && m_.size() != params.size()) return invalid_argument("optimizer: the parameter list changed between steps");
  for (std::size_t k = 0; k < params.size(); ++k) {
    const Tensor &p = params[k], &g = grads[k];
    if (p.dtype() != DType::kF32 || g.dtype() != DType::kF32 || p.shape() != g.shape() || !p.is_contiguous() || !g.is_contiguous())
      return invalid_argument("optimizer: parameter " + std::to_string(k) + " and its gradient are not packed f32 tensors of equal dims");
    if (t_ > 0 && !m_[k].empty() && m_[k].size() != static_cast<std::size_t>(p.numel())) return invalid_argument("optimizer: parameter " + std::to_string(k) + " changed size");
  }
  m_.resize(params.size());
  v_.resize(params.size());
  ++t_;
  const float lr = o_.lr, wd = o_.weight_decay;
  for (std::size_t k = 0; k < params.size(); ++k) {
    float* p = params[k].data<float>();
    const float* g = grads[k].data<float>();
    const auto n = static_cast<std::size_t>(params[k].numel());
    std::vector<float>& m = m_[k];
    if (o_.kind == "sgd") {
      if (o_.momentum == 0) {
        for (std::size_t i = 0; i < n; ++i) p[i] -= lr * (g[i] + wd * p[i]);
        continue;
      }
      const bool first = m.empty();
      m.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        const float gi = g[i] + wd * p[i];
        m[i] = first ? gi : o_.momentum * m[i] + gi;
        p[i] -= lr * (o_.nesterov ? gi + o_.momentum * m[i] : m[i]);
      }
      continue;
    }
    std::vector<float>& v = v_[k];
    m.resize(n);
    v.resize(n);
    const float c1 = 1.0f - std::pow(o_.beta1, static_cast<float>(t_)), c2 = 1.0f - std::pow(o_.beta2, static_cast<float>(t_));
    for (std::size_t i = 0; i < n; ++i) {
      p[i] *= 1.0f - lr * wd;
      m[i] = o_.beta1 * m[i] + (1.0f - o_.beta1) * g[i];
      v[i] = o_.beta2 * v[i] + (1.0f - o_.beta2) * g[i] * g[i];
      p[i] -= lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + o_.eps);
    }
  }
  return Status::ok();
}

Status Optimizer::restore(State s) {
  if (s.steps < 0 || s.m.size() != s.v.size()) return invalid_argument("optimizer: a state of " + std::to_string(s.m.size()) + " momentum and " + std::to_string(s.v.size()) + " moment lists");
  t_ = s.steps;
  m_ = std::move(s.m);
  v_ = std::move(s.v);
  return Status::ok();
}

Status check_schedule(const LrSchedule& s) {
  if (s.kind != "constant" && s.kind != "step" && s.kind != "cosine") return invalid_argument("schedule: '" + s.kind + "' (constant, step or cosine)");
  if (s.warmup < 0 || s.step_size < 1 || !(s.gamma > 0) || !(s.min_lr >= 0))
    return invalid_argument("schedule: warmup must be >= 0, step_size >= 1, gamma > 0 and min_lr >= 0");
  return Status::ok();
}

float scheduled_lr(const LrSchedule& s, float base, std::int64_t step, std::int64_t steps_per_epoch, std::int64_t epochs) {
  double lr = base;
  if (s.kind == "step") {
    lr *= std::pow(static_cast<double>(s.gamma), static_cast<double>(step / std::max<std::int64_t>(steps_per_epoch, 1) / s.step_size));
  } else if (s.kind == "cosine") {
    const double total = static_cast<double>(std::max<std::int64_t>(steps_per_epoch * epochs, 1));
    lr = s.min_lr + (base - s.min_lr) * (1 + std::cos(3.14159265358979323846 * std::min(static_cast<double>(step), total) / total)) / 2;
  }
  if (step < s.warmup) lr *= static_cast<double>(step + 1) / static_cast<double>(s.warmup);
  return static_cast<float>(lr);
}

Result<double> clip_grad_norm(std::vector<Tensor>& grads, double max_norm) {
  if (!(max_norm > 0)) return invalid_argument("clip_grad_norm: max_norm must be > 0");
  double sum = 0;
  for (const Tensor& g : grads) {
    if (g.dtype() != DType::kF32 || !g.is_contiguous()) return invalid_argument("clip_grad_norm: gradients must be packed f32");
    const float* p = g.data<float>();
    for (std::int64_t i = 0, n = g.numel(); i < n; ++i) sum += static_cast<double>(p[i]) * p[i];
  }
  const double norm = std::sqrt(sum), coef = max_norm / (norm + 1e-6);
  if (coef < 1)
    for (Tensor& g : grads) {
      float* p = g.data<float>();
      for (std::int64_t i = 0, n = g.numel(); i < n; ++i) p[i] = static_cast<float>(p[i] * coef);
    }
  return norm;
}

}  // namespace tessera::train
