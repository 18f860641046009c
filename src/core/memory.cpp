#include <bit>
#include <cstdlib>

#include <tessera/core/log.hpp>
#include <tessera/core/memory.hpp>

namespace tessera {

std::string_view device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::kCpu:
      return "cpu";
    case DeviceType::kCuda:
      return "cuda";
    case DeviceType::kHip:
      return "hip";
    case DeviceType::kOther:
      return "other";
  }
  return "unknown";
}

std::string to_string(DeviceLoc loc) {
  return std::string(device_type_name(loc.type)) + ":" + std::to_string(loc.index);
}

namespace {

// Requests above this are refused up front: no machine has 2^48 bytes to give, and the
// rounding arithmetic below stays far from overflow.
constexpr std::size_t kMaxAllocation = std::size_t{1} << 48;

class HostRawMemory final : public RawMemory {
 public:
  Result<void*> allocate(std::size_t bytes, std::size_t alignment) override {
    void* p = std::aligned_alloc(alignment, bytes);
    if (p == nullptr)
      return out_of_memory("host allocation of " + std::to_string(bytes) + " bytes failed");
    return p;
  }
  void free(void* data, std::size_t) override { std::free(data); }
  DeviceLoc device() const override { return {DeviceType::kCpu, 0}; }
};

}  // namespace

std::unique_ptr<RawMemory> make_host_raw_memory() {
  return std::make_unique<HostRawMemory>();
}

std::size_t CachingAllocator::size_class(std::size_t bytes) {
  constexpr std::size_t kLine = kDefaultAlignment;
  if (bytes <= 4096) return (bytes + kLine - 1) / kLine * kLine;
  // Quarter steps between powers of two: at most 25% waste, few distinct classes.
  std::size_t pow2 = std::bit_floor(bytes);
  std::size_t step = pow2 / 4;
  return (bytes + step - 1) / step * step;
}

std::shared_ptr<CachingAllocator> CachingAllocator::create(std::unique_ptr<RawMemory> raw,
                                                           Options options) {
  return std::shared_ptr<CachingAllocator>(new CachingAllocator(std::move(raw), options));
}

CachingAllocator::~CachingAllocator() {
  trim();
}

Result<std::shared_ptr<Buffer>> CachingAllocator::allocate(std::size_t bytes) {
  DeviceLoc loc = raw_->device();
  if (bytes == 0) {
    std::lock_guard lock(mutex_);
    ++stats_.allocations;
    return std::make_shared<Buffer>(nullptr, 0, loc, nullptr);
  }
  if (bytes > kMaxAllocation)
    return out_of_memory("request of " + std::to_string(bytes) + " bytes on " + to_string(loc) +
                         " exceeds the 2^48-byte limit");
  std::size_t block = size_class(bytes);
  void* data = nullptr;
  {
    std::lock_guard lock(mutex_);
    auto it = free_blocks_.find(block);
    if (it != free_blocks_.end() && !it->second.empty()) {
      data = it->second.back();
      it->second.pop_back();
      stats_.bytes_cached -= block;
      ++stats_.cache_hits;
    }
  }
  if (data == nullptr) {
    auto raw = raw_->allocate(block, kDefaultAlignment);
    if (!raw.is_ok()) {
      // Give the cache back and try once more before reporting the failure.
      trim();
      raw = raw_->allocate(block, kDefaultAlignment);
      if (!raw.is_ok()) return raw.status();
    }
    data = *raw;
    std::lock_guard lock(mutex_);
    ++stats_.system_allocations;
  }
  {
    std::lock_guard lock(mutex_);
    ++stats_.allocations;
    stats_.bytes_in_use += block;
    if (stats_.bytes_in_use > stats_.peak_bytes_in_use)
      stats_.peak_bytes_in_use = stats_.bytes_in_use;
  }
  TESSERA_VLOG(kAlloc) << to_string(loc) << " allocate " << bytes << " bytes (block " << block
                       << ") at " << data;
  std::shared_ptr<CachingAllocator> self = shared_from_this();
  return std::make_shared<Buffer>(data, bytes, loc,
                                  [self, block](void* p, std::size_t) { self->release(p, block); });
}

void CachingAllocator::release(void* data, std::size_t block) {
  bool to_system = false;
  {
    std::lock_guard lock(mutex_);
    stats_.bytes_in_use -= block;
    if (stats_.bytes_cached + block > options_.max_cached_bytes) {
      to_system = true;
      ++stats_.system_frees;
    } else {
      free_blocks_[block].push_back(data);
      stats_.bytes_cached += block;
    }
  }
  if (to_system) raw_->free(data, block);
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CachingAllocator::trim() {
  std::unordered_map<std::size_t, std::vector<void*>> blocks;
  {
    std::lock_guard lock(mutex_);
    blocks.swap(free_blocks_);
    for (auto& [size, list] : blocks) stats_.system_frees += list.size();
    stats_.bytes_cached = 0;
  }
  for (auto& [size, list] : blocks)
    for (void* p : list) raw_->free(p, size);
}

Allocator& host_allocator() {
  static std::shared_ptr<CachingAllocator> allocator =
      CachingAllocator::create(make_host_raw_memory());
  return *allocator;
}

}  // namespace tessera
