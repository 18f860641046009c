// FFT passes in plain C++, one complex number at a time (any x86-64, and the reference point
// for the vector files).
#include <algorithm>

#include "kernels.hpp"

namespace tessera::fft::detail {
namespace {

template <typename RR>
struct Scalar {
  using R = RR;
  using T = cx<R>;
  static constexpr int W = 1;
  static T load(const cx<R>* p) { return *p; }
  static T loadn(const cx<R>* p, int n) { return n > 0 ? *p : T{}; }
  static void store(cx<R>* p, T v) { *p = v; }
  static void storen(cx<R>* p, T v, int n) {
    if (n > 0) *p = v;
  }
  // Component-wise: std::complex's operator* checks for infinities through a library call.
  static T add(T a, T b) { return {a.real() + b.real(), a.imag() + b.imag()}; }
  static T sub(T a, T b) { return {a.real() - b.real(), a.imag() - b.imag()}; }
  static T mul(T a, R c) { return {a.real() * c, a.imag() * c}; }
  static T fmadd(T a, R c, T acc) { return {acc.real() + a.real() * c, acc.imag() + a.imag() * c}; }
  static T cmul_split(T a, T re, T im) {  // re = (wr, wr), im = (wi, wi)
    return {a.real() * re.real() - a.imag() * im.real(), a.imag() * re.real() + a.real() * im.real()};
  }
  static T dup_re(T a) { return {a.real(), a.real()}; }
  static T dup_im(T a) { return {a.imag(), a.imag()}; }
  static T swap(T a) { return {a.imag(), a.real()}; }
  static T reverse(T a) { return a; }
  static T neg_re(T a) { return {-a.real(), a.imag()}; }
  static T neg_im(T a) { return {a.real(), -a.imag()}; }
  static T bcast(cx<R> c) { return c; }
  static void transpose(T*) {}
};
using OpsF = Scalar<float>;
using OpsD = Scalar<double>;

#include "kernels_body.inc"

}  // namespace

const Kernels<float>& kernels_f32_generic() {
  static const Kernels<float> k = make_table<OpsF>("generic");
  return k;
}
const Kernels<double>& kernels_f64_generic() {
  static const Kernels<double> k = make_table<OpsD>("generic");
  return k;
}

}  // namespace tessera::fft::detail
