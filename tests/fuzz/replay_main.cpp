// Replays a fuzz target over its seed corpus and deterministic mutations of each seed
// (bit flips, byte overwrites with boundary values, truncations, duplications, splices).
// A crash, sanitizer report or uncaught exception fails the test.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include <gtest/gtest.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using Bytes = std::vector<std::uint8_t>;

std::vector<Bytes> load_corpus() {
  std::vector<Bytes> seeds;
  std::vector<std::filesystem::path> files;
  // Subdirectories too: crashes/ holds inputs that once crashed a target (not valid models).
  for (const auto& e : std::filesystem::recursive_directory_iterator(TESSERA_FUZZ_CORPUS))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return seeds;
}

void run(const Bytes& b) {
  LLVMFuzzerTestOneInput(b.data(), b.size());
}

Bytes mutate(const Bytes& seed, const Bytes& other, std::mt19937_64& rng) {
  Bytes b = seed;
  static constexpr std::uint8_t kInteresting[] = {0x00, 0x01, 0x7f, 0x80, 0xff, '\'', ':', ',',
                                                  '(',  ')',  '{',  '}',  '[',  ']',  '-', '9'};
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    std::size_t pos = b.empty() ? 0 : rng() % b.size();
    switch (rng() % 6) {
      case 0:
        if (!b.empty()) b[pos] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        if (!b.empty()) b[pos] = kInteresting[rng() % sizeof(kInteresting)];
        break;
      case 2:
        b.resize(pos);
        break;
      case 3:
        b.insert(b.begin() + static_cast<long>(pos), b.begin() + static_cast<long>(pos), b.end());
        break;
      case 4:
        if (!other.empty()) {
          std::size_t from = rng() % other.size();
          b.resize(pos);
          b.insert(b.end(), other.begin() + static_cast<long>(from), other.end());
        }
        break;
      case 5:
        if (!b.empty()) b.erase(b.begin() + static_cast<long>(pos));
        break;
    }
  }
  return b;
}

TEST(FuzzReplay, SeedCorpus) {
  auto seeds = load_corpus();
  ASSERT_FALSE(seeds.empty()) << "no seeds in " << TESSERA_FUZZ_CORPUS;
  for (const auto& s : seeds) run(s);
  run({});
}

TEST(FuzzReplay, Mutations) {
  auto seeds = load_corpus();
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 rng(20261121);
  for (int i = 0; i < 20000; ++i) {
    const Bytes& a = seeds[rng() % seeds.size()];
    const Bytes& b = seeds[rng() % seeds.size()];
    run(mutate(a, b, rng));
  }
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
