// The CPU backend: one device (the host), streams served by a thread each, whose tasks run
// their parallel loops on the shared thread pool.
#include "cpu_backend.hpp"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>

#include <tessera/core/cpu.hpp>
#include <tessera/core/log.hpp>
#include <tessera/core/thread_pool.hpp>

namespace tessera::hal {
namespace {

using Clock = std::chrono::steady_clock;

class CpuEvent final : public Event {
 public:
  bool query() const override {
    std::lock_guard lock(mutex_);
    return completed_ >= recorded_;
  }
  Status synchronize() const override {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return completed_ >= recorded_; });
    return Status::ok();
  }
  Result<double> elapsed_ms_since(const Event& start_event) const override {
    const auto* start = dynamic_cast<const CpuEvent*>(&start_event);
    if (start == nullptr)
      return invalid_argument("elapsed time between events of different devices");
    auto a = start->completion_time();
    auto b = completion_time();
    if (!a || !b) return invalid_argument("elapsed time needs two recorded, completed events");
    return std::chrono::duration<double, std::milli>(*b - *a).count();
  }

  // Called by the recording stream: returns the generation its marker task completes.
  std::uint64_t begin_record() {
    std::lock_guard lock(mutex_);
    return ++recorded_;
  }
  void complete(std::uint64_t generation) {
    {
      std::lock_guard lock(mutex_);
      if (generation > completed_) {
        completed_ = generation;
        time_ = Clock::now();
      }
    }
    cv_.notify_all();
  }
  std::uint64_t recorded_generation() const {
    std::lock_guard lock(mutex_);
    return recorded_;
  }
  void wait_for(std::uint64_t generation) const {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return completed_ >= generation; });
  }

 private:
  std::optional<Clock::time_point> completion_time() const {
    std::lock_guard lock(mutex_);
    if (recorded_ == 0 || completed_ < recorded_) return std::nullopt;
    return time_;
  }

  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::uint64_t recorded_ = 0, completed_ = 0;
  Clock::time_point time_{};
};

class CpuStream final : public Stream {
 public:
  CpuStream() : thread_([this] { run(); }) {}
  ~CpuStream() override {
    Status ignored = synchronize();
    (void)ignored;
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    work_cv_.notify_one();
    thread_.join();
  }

  DeviceLoc device() const override { return {DeviceType::kCpu, 0}; }

  Status enqueue(std::function<Status()> task) override {
    if (!task) return invalid_argument("Stream::enqueue: empty task");
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(task));
    }
    work_cv_.notify_one();
    return Status::ok();
  }

  Status copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0) return Status::ok();
    if (dst == nullptr || src == nullptr) return invalid_argument("Stream::copy: null pointer");
    return enqueue([=] {
      std::memmove(dst, src, bytes);
      return Status::ok();
    });
  }

  Status record(Event& event) override {
    auto* e = dynamic_cast<CpuEvent*>(&event);
    if (e == nullptr) return invalid_argument("Stream::record: event belongs to another device");
    std::uint64_t generation = e->begin_record();
    // The marker completes even when the stream is in error, so waiters never hang.
    std::lock_guard lock(mutex_);
    queue_.push_back(Marker{e, generation});
    work_cv_.notify_one();
    return Status::ok();
  }

  Status wait(const Event& event) override {
    const auto* e = dynamic_cast<const CpuEvent*>(&event);
    if (e == nullptr) return invalid_argument("Stream::wait: event belongs to another device");
    std::uint64_t generation = e->recorded_generation();
    return enqueue([e, generation] {
      e->wait_for(generation);
      return Status::ok();
    });
  }

  Status synchronize() override {
    std::unique_lock lock(mutex_);
    idle_cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
    Status s = error_;
    error_ = Status::ok();
    return s;
  }

 private:
  struct Marker {
    CpuEvent* event;
    std::uint64_t generation;
  };
  using Item = std::variant<std::function<Status()>, Marker>;

  void run() {
    std::unique_lock lock(mutex_);
    while (true) {
      work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      Item item = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      const bool failed = !error_.is_ok();
      lock.unlock();
      Status s;
      if (auto* m = std::get_if<Marker>(&item)) {
        m->event->complete(m->generation);
      } else if (!failed) {
        try {
          s = std::get<std::function<Status()>>(item)();
        } catch (const std::exception& ex) {
          s = internal_error(std::string("stream task threw: ") + ex.what());
        } catch (...) {
          s = internal_error("stream task threw a non-standard exception");
        }
      }
      lock.lock();
      if (!s.is_ok() && error_.is_ok()) error_ = s;
      busy_ = false;
      if (queue_.empty()) idle_cv_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<Item> queue_;
  bool busy_ = false, stop_ = false;
  Status error_;
  std::thread thread_;  // last: starts after the members it uses exist
};

int read_clock_mhz() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("cpu MHz", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return static_cast<int>(std::atof(line.c_str() + colon + 1));
    }
  return 0;
}

class CpuDevice final : public Device {
 public:
  CpuDevice() {
    const CpuInfo& cpu = cpu_info();
    props_.name = cpu.model.empty() ? "unknown x86-64 CPU" : cpu.model;
    props_.vendor = cpu.vendor;
    props_.architecture = "x86-64";
    props_.memory_total_bytes = cpu.memory_total_bytes;
    props_.memory_free_bytes = cpu.memory_available_bytes;
    props_.compute_units = cpu.logical_cpus;
    props_.clock_mhz = read_clock_mhz();
    props_.warp_size = 1;
  }
  DeviceLoc loc() const override { return {DeviceType::kCpu, 0}; }
  const DeviceProperties& properties() const override { return props_; }
  Allocator& allocator() override { return host_allocator(); }
  Result<std::unique_ptr<Stream>> create_stream() override {
    return std::unique_ptr<Stream>(std::make_unique<CpuStream>());
  }
  Result<std::unique_ptr<Event>> create_event() override {
    return std::unique_ptr<Event>(std::make_unique<CpuEvent>());
  }
  std::string fingerprint() const override {
    const CpuInfo& cpu = cpu_info();
    return "cpu|" + cpu.vendor + "|" + props_.name + "|family " + std::to_string(cpu.family) +
           " model " + std::to_string(cpu.model_id) + "|isa " + std::string(isa_name(cpu.isa())) +
           "|l1d " + std::to_string(cpu.cache_bytes(1)) + " l2 " +
           std::to_string(cpu.cache_bytes(2)) + " l3 " + std::to_string(cpu.cache_bytes(3));
  }

 private:
  DeviceProperties props_;
};

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  int device_count() const override { return 1; }
  Device& device(int) override { return device_; }

 private:
  CpuDevice device_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() {
  return std::make_unique<CpuBackend>();
}

}  // namespace tessera::hal
