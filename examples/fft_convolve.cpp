// 2-D convolution by FFT: blur a 256 x 256 image with a 31 x 31 Gaussian through real
// transforms (r2c, pointwise product of the half spectra, c2r), and check the result
// against the direct sum at a few pixels. Prints the spectrum's strongest frequencies of a
// test signal too. Exits non-zero if the two methods disagree.
#include <tessera/fft.hpp>

#include <cmath>
#include <complex>
#include <cstdio>
#include <vector>

namespace fft = tessera::fft;

int main() {
  // 1. The spectrum of a signal: two tones at 50 and 120 cycles per 1000 samples.
  const int n = 1000;
  std::vector<double> sig(n);
  for (int i = 0; i < n; ++i)
    sig[static_cast<std::size_t>(i)] = std::sin(2 * M_PI * 50 * i / n) + 0.5 * std::sin(2 * M_PI * 120 * i / n);
  fft::PlanDesc sd;
  sd.kind = fft::Kind::kR2C;
  sd.precision = fft::Precision::kDouble;
  sd.lengths = {n};
  const fft::Plan sp = fft::Plan::create(sd).value_or_throw();
  std::vector<std::complex<double>> spec(n / 2 + 1);
  sp.execute(sig.data(), spec.data()).throw_if_error();
  int peak1 = 1, peak2 = 1;
  for (int k = 1; k <= n / 2; ++k) {
    const double a = std::abs(spec[static_cast<std::size_t>(k)]);
    if (a > std::abs(spec[static_cast<std::size_t>(peak1)])) peak2 = peak1, peak1 = k;
    else if (a > std::abs(spec[static_cast<std::size_t>(peak2)])) peak2 = k;
  }
  std::printf("%s\nstrongest frequencies: %d (|X| = %.1f) and %d (|X| = %.1f)\n", sp.describe().c_str(), peak1,
              std::abs(spec[static_cast<std::size_t>(peak1)]), peak2, std::abs(spec[static_cast<std::size_t>(peak2)]));
  if (peak1 != 50 || peak2 != 120) return 1;

  // 2. Circular convolution of an image with a Gaussian kernel.
  const int H = 256, W = 256, K = 31;
  std::vector<float> img(H * W), ker(H * W, 0.0f), out(H * W);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) img[static_cast<std::size_t>(y * W + x)] = ((x / 16 + y / 16) % 2) ? 1.0f : 0.0f;
  double sum = 0;
  for (int y = 0; y < K; ++y)
    for (int x = 0; x < K; ++x) {
      const double g = std::exp(-((y - K / 2) * (y - K / 2) + (x - K / 2) * (x - K / 2)) / (2.0 * 5.0 * 5.0));
      // centred at (0, 0), wrapping around
      ker[static_cast<std::size_t>(((y - K / 2 + H) % H) * W + (x - K / 2 + W) % W)] = static_cast<float>(g);
      sum += g;
    }
  for (float& v : ker) v = static_cast<float>(v / sum);

  fft::PlanDesc d;
  d.kind = fft::Kind::kR2C;
  d.lengths = {H, W};
  const fft::Plan fwd = fft::Plan::create(d).value_or_throw();
  d.kind = fft::Kind::kC2R;
  d.direction = fft::Direction::kInverse;
  d.scale = 1.0 / (H * W);
  const fft::Plan inv = fft::Plan::create(d).value_or_throw();
  std::vector<std::complex<float>> A(H * (W / 2 + 1)), B(A.size());
  fwd.execute(img.data(), A.data()).throw_if_error();
  fwd.execute(ker.data(), B.data()).throw_if_error();
  for (std::size_t i = 0; i < A.size(); ++i) A[i] *= B[i];
  inv.execute(A.data(), out.data()).throw_if_error();

  double worst = 0;
  for (int t = 0; t < 16; ++t) {
    const int y = (t * 37) % H, x = (t * 91 + 5) % W;
    double direct = 0;
    for (int j = 0; j < H; ++j)
      for (int i = 0; i < W; ++i)
        direct += img[static_cast<std::size_t>(j * W + i)] *
                  ker[static_cast<std::size_t>(((y - j + H) % H) * W + (x - i + W) % W)];
    worst = std::max(worst, std::abs(direct - out[static_cast<std::size_t>(y * W + x)]));
  }
  std::printf("%s\nblurred %dx%d image by FFT; largest difference from the direct sum at 16 pixels: %.2e\n",
              fwd.describe().c_str(), H, W, worst);
  return worst < 1e-4 ? 0 : 1;
}
