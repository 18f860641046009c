// Buffers and allocators.
//
// A Buffer is a reference-counted block of memory on one device; Tensors share Buffers.
// Buffer and the Allocator interface live in core because Tensor (core) owns a Buffer; hal
// gives each device its RawMemory and wraps it in a CachingAllocator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <tessera/core/status.hpp>

namespace tessera {

// Every allocation is aligned to at least this many bytes (one cache line, one zmm register).
inline constexpr std::size_t kDefaultAlignment = 64;

enum class DeviceType : std::uint8_t { kCpu, kCuda, kHip, kOther };
std::string_view device_type_name(DeviceType t);

// Where a buffer lives: a device type and an ordinal within it.
struct DeviceLoc {
  DeviceType type = DeviceType::kCpu;
  int index = 0;
  bool is_host() const { return type == DeviceType::kCpu; }
  friend bool operator==(const DeviceLoc&, const DeviceLoc&) = default;
};
std::string to_string(DeviceLoc loc);  // "cpu:0", "cuda:1"

class Buffer {
 public:
  using Releaser = std::function<void(void* data, std::size_t size)>;
  Buffer(void* data, std::size_t size, DeviceLoc device, Releaser release)
      : data_(data), size_(size), device_(device), release_(std::move(release)) {}
  ~Buffer() {
    if (release_) release_(data_, size_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Memory the caller keeps alive for the Buffer's lifetime; never freed by tessera.
  static std::shared_ptr<Buffer> wrap(void* data, std::size_t size, DeviceLoc device = {}) {
    return std::make_shared<Buffer>(data, size, device, nullptr);
  }

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  DeviceLoc device() const { return device_; }

 private:
  void* data_;
  std::size_t size_;
  DeviceLoc device_;
  Releaser release_;
};

struct MemoryStats {
  std::size_t bytes_in_use = 0;       // held by live buffers (rounded block sizes)
  std::size_t peak_bytes_in_use = 0;  // high-water mark of bytes_in_use
  std::size_t bytes_cached = 0;       // freed by buffers, kept for reuse
  std::uint64_t allocations = 0;      // allocate() calls that succeeded
  std::uint64_t cache_hits = 0;       // ... served from the cache
  std::uint64_t system_allocations = 0;
  std::uint64_t system_frees = 0;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // A zero-byte request gives a valid Buffer whose data() is null. Failure: kOutOfMemory.
  virtual Result<std::shared_ptr<Buffer>> allocate(std::size_t bytes) = 0;
  virtual MemoryStats stats() const = 0;
  // Returns every cached (unused) block to the system.
  virtual void trim() = 0;
  virtual DeviceLoc device() const = 0;
};

// What a device provides underneath the cache: raw allocate and free.
class RawMemory {
 public:
  virtual ~RawMemory() = default;
  virtual Result<void*> allocate(std::size_t bytes, std::size_t alignment) = 0;
  virtual void free(void* data, std::size_t bytes) = 0;
  virtual DeviceLoc device() const = 0;
};

// 64-byte aligned host memory from the C library.
std::unique_ptr<RawMemory> make_host_raw_memory();

// Keeps freed blocks in size classes (multiples of 64 bytes up to 4 KiB, then quarter
// powers of two) and serves later requests of the same class from them. Thread-safe.
class CachingAllocator final : public Allocator,
                               public std::enable_shared_from_this<CachingAllocator> {
 public:
  struct Options {
    std::size_t max_cached_bytes = std::size_t{1} << 30;  // beyond this, frees go to the system
  };
  static std::shared_ptr<CachingAllocator> create(std::unique_ptr<RawMemory> raw, Options options);
  static std::shared_ptr<CachingAllocator> create(std::unique_ptr<RawMemory> raw) {
    return create(std::move(raw), Options{});
  }
  ~CachingAllocator() override;

  Result<std::shared_ptr<Buffer>> allocate(std::size_t bytes) override;
  MemoryStats stats() const override;
  void trim() override;
  DeviceLoc device() const override { return raw_->device(); }

  // The size class a request of `bytes` is served from.
  static std::size_t size_class(std::size_t bytes);

 private:
  CachingAllocator(std::unique_ptr<RawMemory> raw, Options options)
      : raw_(std::move(raw)), options_(options) {}
  void release(void* data, std::size_t block);

  std::unique_ptr<RawMemory> raw_;
  Options options_;
  mutable std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<void*>> free_blocks_;
  MemoryStats stats_;
};

// The process-wide caching allocator of host memory (what CPU tensors use by default).
Allocator& host_allocator();

}  // namespace tessera
