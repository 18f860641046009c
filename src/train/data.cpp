// Training data (train.hpp): IDX files (gzip or plain), Fashion-MNIST, batches, seeded orders.
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "splitmix.hpp"
#include "tessera/train.hpp"

namespace tessera::train {
namespace {

// The whole file, inflated when it is gzip (zlib reads plain files through the same calls).
Result<std::vector<unsigned char>> read_all(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return not_found("read_idx: '" + path.string() + "' is not a file");
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return io_error("read_idx: cannot open '" + path.string() + "'");
  std::vector<unsigned char> data;
  unsigned char buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int err = 0;
      const std::string msg = gzerror(f, &err);
      gzclose(f);
      return parse_error("read_idx: '" + path.string() + "' is corrupt: " + msg);
    }
    if (n == 0) break;
    data.insert(data.end(), buf, buf + n);
    if (data.size() > (std::size_t{1} << 34)) {
      gzclose(f);
      return invalid_argument("read_idx: '" + path.string() + "' inflates past 16 GiB");
    }
  }
  gzclose(f);
  return data;
}

std::uint32_t big_endian(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

// The dims of an IDX file of u8 elements with `rank` dims (magic 0x08, rank), checked against
// its length; the elements start at data + 4 + 4 * rank.
Result<std::vector<std::int64_t>> idx_dims(const std::vector<unsigned char>& data, int rank, const std::filesystem::path& path) {
  const std::string what = "read_idx: '" + path.string() + "'";
  if (data.size() < 4 + 4 * static_cast<std::size_t>(rank)) return parse_error(what + " is shorter than an IDX header");
  if (data[0] != 0 || data[1] != 0 || data[2] != 0x08 || data[3] != rank)
    return parse_error(what + ": magic " + std::to_string(big_endian(data.data())) + " is not that of u8 data of rank " + std::to_string(rank));
  std::vector<std::int64_t> dims;
  std::uint64_t total = 1;
  for (int i = 0; i < rank; ++i) {
    dims.push_back(big_endian(data.data() + 4 + 4 * i));
    total *= static_cast<std::uint64_t>(dims.back());
    if (total > (std::uint64_t{1} << 34)) return parse_error(what + ": its dims are too large");
  }
  if (data.size() != 4 + 4 * static_cast<std::size_t>(rank) + total)
    return parse_error(what + ": the header promises " + std::to_string(total) + " bytes of data, the file holds " +
                       std::to_string(data.size() - 4 - 4 * static_cast<std::size_t>(rank)));
  return dims;
}

}  // namespace

Result<Dataset> read_idx(const std::filesystem::path& images, const std::filesystem::path& labels) {
  TESSERA_ASSIGN_OR_RETURN(const std::vector<unsigned char> img, read_all(images));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<unsigned char> lab, read_all(labels));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<std::int64_t> idims, idx_dims(img, 3, images));
  TESSERA_ASSIGN_OR_RETURN(const std::vector<std::int64_t> ldims, idx_dims(lab, 1, labels));
  if (idims[0] != ldims[0])
    return invalid_argument("read_idx: '" + images.string() + "' holds " + std::to_string(idims[0]) + " images, '" + labels.string() + "' " +
                            std::to_string(ldims[0]) + " labels");
  Dataset d;
  TESSERA_ASSIGN_OR_RETURN(d.images, Tensor::empty(Shape({idims[0], 1, idims[1], idims[2]}), DType::kF32));
  TESSERA_ASSIGN_OR_RETURN(d.labels, Tensor::empty(Shape({ldims[0]}), DType::kI64));
  float* x = d.images.data<float>();
  const unsigned char* src = img.data() + 16;
  for (std::int64_t i = 0, n = d.images.numel(); i < n; ++i) x[i] = static_cast<float>(src[i]) / 255.0f;
  std::int64_t* y = d.labels.data<std::int64_t>();
  for (std::int64_t i = 0; i < ldims[0]; ++i) y[i] = lab[8 + static_cast<std::size_t>(i)];
  return d;
}

Result<Dataset> fashion_mnist(bool train, const std::filesystem::path& dir) {
  const std::string stem = train ? "train" : "t10k";
  const auto file = [&](const std::string& kind) {
    const std::filesystem::path gz = dir / (stem + "-" + kind + "-idx" + (kind == "images" ? "3" : "1") + "-ubyte.gz");
    std::error_code ec;
    return std::filesystem::exists(gz, ec) ? gz : gz.parent_path() / gz.stem();  // the .gz, else the inflated file
  };
  Result<Dataset> d = read_idx(file("images"), file("labels"));
  if (!d.is_ok()) return d.status().with_context("fashion_mnist (Debian's dataset-fashion-mnist installs it)");
  return d;
}

Result<Dataset> gather_batch(const Dataset& d, const std::vector<std::int64_t>& order, std::int64_t first, std::int64_t count) {
  if (first < 0 || count < 0 || first + count > static_cast<std::int64_t>(order.size())) return invalid_argument("gather_batch: samples out of range");
  std::vector<std::int64_t> dims = d.images.shape().dims();
  const std::int64_t per = dims[0] == 0 ? 0 : d.images.numel() / dims[0];
  dims[0] = count;
  Dataset b;
  TESSERA_ASSIGN_OR_RETURN(b.images, Tensor::empty(Shape(dims), DType::kF32));
  TESSERA_ASSIGN_OR_RETURN(b.labels, Tensor::empty(Shape({count}), DType::kI64));
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t s = order[static_cast<std::size_t>(first + i)];
    if (s < 0 || s >= d.size()) return invalid_argument("gather_batch: sample " + std::to_string(s) + " out of range");
    std::memcpy(b.images.data<float>() + i * per, d.images.data<float>() + s * per, static_cast<std::size_t>(per) * sizeof(float));
    b.labels.data<std::int64_t>()[i] = d.labels.data<std::int64_t>()[s];
  }
  return b;
}

std::vector<std::int64_t> shuffled(std::int64_t n, std::uint64_t seed) {
  const auto splitmix = [](std::uint64_t x) { return detail::splitmix64_mix(x + 0x9e3779b97f4a7c15ULL); };
  std::vector<std::pair<std::uint64_t, std::int64_t>> keyed(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  for (std::int64_t i = 0; i < n; ++i) keyed[static_cast<std::size_t>(i)] = {splitmix(seed ^ splitmix(static_cast<std::uint64_t>(i))), i};
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::int64_t> order;
  for (const auto& k : keyed) order.push_back(k.second);
  return order;
}

}  // namespace tessera::train
