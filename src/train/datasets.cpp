// Datasets beyond IDX (train.hpp): .npy pairs, CSV tables, a folder holding either, and the
// seeded image augmentation fit applies to each batch.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>

#include "splitmix.hpp"
#include "tessera/core/npy.hpp"
#include "tessera/train.hpp"

namespace tessera::train {
namespace {

// The images of an .npy file as f32: u8 divided by 255, f32 as is, f64 rounded; [N, H, W]
// gains a channel axis.
Result<Tensor> npy_samples(const Tensor& t, const std::string& what) {
  if (t.rank() < 2) return invalid_argument(what + ": samples must have a leading sample axis and at least one more (dims " + t.shape().to_string() + ")");
  std::vector<std::int64_t> dims = t.shape().dims();
  if (dims.size() == 3) dims.insert(dims.begin() + 1, 1);
  TESSERA_ASSIGN_OR_RETURN(const Tensor c, t.contiguous());
  TESSERA_ASSIGN_OR_RETURN(Tensor x, Tensor::empty(Shape(dims), DType::kF32));
  float* to = x.data<float>();
  const std::int64_t n = c.numel();
  switch (c.dtype()) {
    case DType::kU8:
      for (std::int64_t i = 0; i < n; ++i) to[i] = static_cast<float>(c.data<std::uint8_t>()[i]) / 255.0f;
      break;
    case DType::kF32: std::memcpy(to, c.data(), static_cast<std::size_t>(n) * sizeof(float)); break;
    case DType::kF64:
      for (std::int64_t i = 0; i < n; ++i) to[i] = static_cast<float>(c.data<double>()[i]);
      break;
    default: return invalid_argument(what + ": samples of " + std::string(dtype_name(c.dtype())) + " (u8, f32 or f64)");
  }
  return x;
}

template <class T>
Status copy_labels(const Tensor& c, std::int64_t* to, const std::string& what) {
  for (std::int64_t i = 0; i < c.numel(); ++i) {
    const auto v = c.data<T>()[i];
    if (v < 0) return invalid_argument(what + ": label " + std::to_string(i) + " is " + std::to_string(v) + " (labels are class numbers >= 0)");
    to[i] = static_cast<std::int64_t>(v);
  }
  return Status::ok();
}

Result<Tensor> npy_labels(const Tensor& t, const std::string& what) {
  if (t.rank() != 1) return invalid_argument(what + ": labels must be one axis (dims " + t.shape().to_string() + ")");
  TESSERA_ASSIGN_OR_RETURN(const Tensor c, t.contiguous());
  TESSERA_ASSIGN_OR_RETURN(Tensor y, Tensor::empty(Shape({c.numel()}), DType::kI64));
  std::int64_t* to = y.data<std::int64_t>();
  switch (c.dtype()) {
    case DType::kI64: TESSERA_RETURN_IF_ERROR(copy_labels<std::int64_t>(c, to, what)); break;
    case DType::kI32: TESSERA_RETURN_IF_ERROR(copy_labels<std::int32_t>(c, to, what)); break;
    case DType::kI16: TESSERA_RETURN_IF_ERROR(copy_labels<std::int16_t>(c, to, what)); break;
    case DType::kI8: TESSERA_RETURN_IF_ERROR(copy_labels<std::int8_t>(c, to, what)); break;
    case DType::kU8: TESSERA_RETURN_IF_ERROR(copy_labels<std::uint8_t>(c, to, what)); break;
    case DType::kU16: TESSERA_RETURN_IF_ERROR(copy_labels<std::uint16_t>(c, to, what)); break;
    default: return invalid_argument(what + ": labels of " + std::string(dtype_name(c.dtype())) + " (an integer type)");
  }
  return y;
}

// The comma-separated fields of a line (no quoting), trailing "\r" dropped.
std::vector<std::string_view> fields(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string_view> f;
  for (std::size_t at = 0;;) {
    const std::size_t comma = line.find(',', at);
    f.push_back(line.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at));
    if (comma == std::string_view::npos) return f;
    at = comma + 1;
  }
}

bool number(std::string_view s, double& v) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

Result<Dataset> read_npy_dataset(const std::filesystem::path& samples, const std::filesystem::path& labels) {
  TESSERA_ASSIGN_OR_RETURN(const Tensor x, read_npy(samples.string()));
  TESSERA_ASSIGN_OR_RETURN(const Tensor y, read_npy(labels.string()));
  Dataset d;
  TESSERA_ASSIGN_OR_RETURN(d.images, npy_samples(x, "read_npy_dataset: '" + samples.string() + "'"));
  TESSERA_ASSIGN_OR_RETURN(d.labels, npy_labels(y, "read_npy_dataset: '" + labels.string() + "'"));
  if (d.images.shape()[0] != d.labels.numel())
    return invalid_argument("read_npy_dataset: '" + samples.string() + "' holds " + std::to_string(d.images.shape()[0]) + " samples, '" + labels.string() +
                            "' " + std::to_string(d.labels.numel()) + " labels");
  return d;
}

Result<Dataset> read_csv(const std::filesystem::path& path, int label_column) {
  const std::string what = "read_csv: '" + path.string() + "'";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return not_found(what + " is not a file");
  std::ifstream in(path);
  if (!in) return io_error(what + ": cannot open it");
  std::vector<float> x;
  std::vector<std::int64_t> y;
  std::size_t columns = 0, label = 0;
  std::string line;
  for (std::int64_t number_of_line = 1; std::getline(in, line); ++number_of_line) {
    const std::string where = what + " line " + std::to_string(number_of_line);
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string_view> f = fields(line);
    if (columns == 0) {
      columns = f.size();
      if (columns < 2) return invalid_argument(where + ": one column (a label column and at least one feature are needed)");
      const long long lc = label_column < 0 ? static_cast<long long>(columns) + label_column : label_column;
      if (lc < 0 || lc >= static_cast<long long>(columns))
        return invalid_argument(what + ": label column " + std::to_string(label_column) + " of " + std::to_string(columns) + " columns");
      label = static_cast<std::size_t>(lc);
      double v;
      if (std::none_of(f.begin(), f.end(), [&](std::string_view s) { return number(s, v); })) continue;  // a header
    }
    if (f.size() != columns) return invalid_argument(where + ": " + std::to_string(f.size()) + " fields, the first row has " + std::to_string(columns));
    for (std::size_t c = 0; c < f.size(); ++c) {
      double v;
      if (!number(f[c], v)) return invalid_argument(where + ", column " + std::to_string(c + 1) + ": '" + std::string(f[c]) + "' is not a number");
      if (c == label) {
        if (!(v >= 0) || v != std::floor(v) || v > 1e15)
          return invalid_argument(where + ", column " + std::to_string(c + 1) + ": label " + std::string(f[c]) + " is not a class number >= 0");
        y.push_back(static_cast<std::int64_t>(v));
      } else {
        x.push_back(static_cast<float>(v));
      }
    }
  }
  if (in.bad()) return io_error(what + ": reading failed");
  if (y.empty()) return invalid_argument(what + " holds no rows");
  const auto n = static_cast<std::int64_t>(y.size());
  Dataset d;
  TESSERA_ASSIGN_OR_RETURN(d.images, Tensor::from_vector<float>(Shape({n, static_cast<std::int64_t>(columns - 1)}), x));
  TESSERA_ASSIGN_OR_RETURN(d.labels, Tensor::from_vector<std::int64_t>(Shape({n}), y));
  return d;
}

Result<Dataset> load_dataset(const std::filesystem::path& dir, bool train) {
  std::error_code ec;
  const std::string stem = train ? "train" : "test";
  if (std::filesystem::exists(dir / (stem + "_images.npy"), ec) || std::filesystem::exists(dir / (stem + "_labels.npy"), ec))
    return read_npy_dataset(dir / (stem + "_images.npy"), dir / (stem + "_labels.npy"));
  if (std::filesystem::exists(dir / (stem + ".csv"), ec)) return read_csv(dir / (stem + ".csv"));
  const std::string idx = train ? "train-images-idx3-ubyte" : "t10k-images-idx3-ubyte";
  if (std::filesystem::exists(dir / idx, ec) || std::filesystem::exists(dir / (idx + ".gz"), ec)) return fashion_mnist(train, dir);
  return not_found("load_dataset: '" + dir.string() + "' holds none of " + stem + "_images.npy + " + stem + "_labels.npy, " + stem + ".csv, or the IDX files " +
                   idx + "[.gz] + ...");
}

Status augment(Dataset& batch, std::span<const std::int64_t> ids, const Augmentation& a, std::uint64_t seed) {
  if (a.crop_pad == 0 && !a.flip) return Status::ok();
  if (a.crop_pad < 0) return invalid_argument("augment: crop padding " + std::to_string(a.crop_pad) + " is negative");
  if (batch.images.rank() != 4) return invalid_argument("augment: images [N, C, H, W] are needed (dims " + batch.images.shape().to_string() + ")");
  const std::int64_t n = batch.images.shape()[0], c = batch.images.shape()[1], h = batch.images.shape()[2], w = batch.images.shape()[3];
  if (static_cast<std::int64_t>(ids.size()) != n) return invalid_argument("augment: " + std::to_string(ids.size()) + " sample ids for a batch of " + std::to_string(n));
  const std::int64_t p = a.crop_pad, plane = h * w;
  std::vector<float> src(static_cast<std::size_t>(c * plane));
  for (std::int64_t i = 0; i < n; ++i) {
    // Each sample's choices from (seed, its id): the same for any batching, rank or thread count.
    const std::uint64_t r = detail::splitmix64_mix(seed ^ detail::splitmix64_mix(static_cast<std::uint64_t>(ids[static_cast<std::size_t>(i)]) + 0x9e3779b97f4a7c15ULL));
    const std::int64_t span = 2 * p + 1;
    const std::int64_t dy = p > 0 ? static_cast<std::int64_t>(r % static_cast<std::uint64_t>(span)) - p : 0;
    const std::int64_t dx = p > 0 ? static_cast<std::int64_t>((r >> 16) % static_cast<std::uint64_t>(span)) - p : 0;
    const bool flip = a.flip && ((r >> 63) & 1u);
    float* img = batch.images.data<float>() + i * c * plane;
    std::memcpy(src.data(), img, src.size() * sizeof(float));
    // Output (y, x) reads the padded image at (y + p + dy, x + p + dx), i.e. the source at
    // (y + dy, x + dx) (zero outside), mirrored first when flipped.
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x) {
          const std::int64_t sy = y + dy, sx0 = x + dx, sx = flip ? w - 1 - sx0 : sx0;
          img[ch * plane + y * w + x] = sy >= 0 && sy < h && sx0 >= 0 && sx0 < w ? src[static_cast<std::size_t>(ch * plane + sy * w + sx)] : 0.0f;
        }
  }
  return Status::ok();
}

}  // namespace tessera::train
