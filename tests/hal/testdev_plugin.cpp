// A backend plug-in for tests: two "devices" backed by host memory, with synchronous
// streams. It proves the registry's loading path and the plug-in ABI end to end.
#include <chrono>
#include <cstring>

#include <tessera/hal/plugin.hpp>

namespace {

using namespace tessera;

class TestEvent final : public hal::Event {
 public:
  bool query() const override { return true; }
  Status synchronize() const override { return Status::ok(); }
  Result<double> elapsed_ms_since(const hal::Event& start) const override {
    const auto* s = dynamic_cast<const TestEvent*>(&start);
    if (!s || !s->recorded || !recorded) return invalid_argument("testdev: events not recorded");
    return std::chrono::duration<double, std::milli>(time - s->time).count();
  }
  bool recorded = false;
  std::chrono::steady_clock::time_point time;
};

class TestStream final : public hal::Stream {
 public:
  explicit TestStream(DeviceLoc loc) : loc_(loc) {}
  DeviceLoc device() const override { return loc_; }
  Status enqueue(std::function<Status()> task) override {
    if (error_.is_ok()) error_ = task();
    return Status::ok();
  }
  Status copy(void* dst, const void* src, std::size_t bytes) override {
    std::memmove(dst, src, bytes);
    return Status::ok();
  }
  Status record(hal::Event& e) override {
    auto& te = dynamic_cast<TestEvent&>(e);
    te.recorded = true;
    te.time = std::chrono::steady_clock::now();
    return Status::ok();
  }
  Status wait(const hal::Event&) override { return Status::ok(); }
  Status synchronize() override {
    Status s = error_;
    error_ = Status::ok();
    return s;
  }

 private:
  DeviceLoc loc_;
  Status error_;
};

class TestMemory final : public RawMemory {
 public:
  explicit TestMemory(DeviceLoc loc) : inner_(make_host_raw_memory()), loc_(loc) {}
  Result<void*> allocate(std::size_t bytes, std::size_t alignment) override {
    return inner_->allocate(bytes, alignment);
  }
  void free(void* p, std::size_t bytes) override { inner_->free(p, bytes); }
  DeviceLoc device() const override { return loc_; }

 private:
  std::unique_ptr<RawMemory> inner_;
  DeviceLoc loc_;
};

class TestDevice final : public hal::Device {
 public:
  explicit TestDevice(int index)
      : loc_{DeviceType::kOther, index},
        allocator_(CachingAllocator::create(std::make_unique<TestMemory>(loc_))) {
    props_.name = "tessera test device " + std::to_string(index);
    props_.vendor = "tessera";
    props_.architecture = "testdev";
    props_.memory_total_bytes = 1 << 30;
    props_.compute_units = 4;
    props_.warp_size = 64;
  }
  DeviceLoc loc() const override { return loc_; }
  const hal::DeviceProperties& properties() const override { return props_; }
  Allocator& allocator() override { return *allocator_; }
  Result<std::unique_ptr<hal::Stream>> create_stream() override {
    return std::unique_ptr<hal::Stream>(std::make_unique<TestStream>(loc_));
  }
  Result<std::unique_ptr<hal::Event>> create_event() override {
    return std::unique_ptr<hal::Event>(std::make_unique<TestEvent>());
  }
  std::string fingerprint() const override { return "testdev|" + props_.name; }

 private:
  DeviceLoc loc_;
  std::shared_ptr<CachingAllocator> allocator_;
  hal::DeviceProperties props_;
};

class TestBackend final : public hal::Backend {
 public:
  TestBackend() : devices_{TestDevice(0), TestDevice(1)} {}
  std::string_view name() const override { return "testdev"; }
  int device_count() const override { return 2; }
  hal::Device& device(int i) override { return devices_[i]; }

 private:
  TestDevice devices_[2];
};

}  // namespace

extern "C" std::uint32_t tessera_hal_plugin_abi() {
  return tessera::hal::kPluginAbiVersion;
}
extern "C" tessera::hal::Backend* tessera_hal_plugin_create(std::string*) {
  return new TestBackend;
}
