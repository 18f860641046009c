// hal: devices, memory, streams and events.
//
// A Backend owns the devices of one kind (the CPU is built in; GPU backends are plug-ins,
// shared objects opened at run time — see plugin.hpp). A Stream is an in-order queue of work
// on one device; an Event marks a point in a stream. Every library entry point takes a handle
// that carries the stream it runs on.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <tessera/core/memory.hpp>
#include <tessera/core/status.hpp>

namespace tessera::hal {

struct DeviceProperties {
  std::string name;          // "AMD EPYC 9B14", "NVIDIA H100 80GB HBM3"
  std::string vendor;        // "AuthenticAMD", "NVIDIA"
  std::string architecture;  // "x86-64 avx512", "sm_90", "gfx942"
  std::int64_t memory_total_bytes = 0;
  std::int64_t memory_free_bytes = 0;
  int compute_units = 0;  // CPUs in the affinity mask; SMs; CUs
  int clock_mhz = 0;      // 0 when unknown
  int warp_size = 1;      // lanes that execute in lock step (1 on the CPU)
  std::string driver_version, runtime_version;
};

class Event {
 public:
  virtual ~Event() = default;
  // True when the work before the last record() has finished (or nothing was recorded).
  virtual bool query() const = 0;
  // Blocks the calling thread until query() is true.
  virtual Status synchronize() const = 0;
  // Milliseconds from `start` to this event; both recorded and complete, on the same device.
  virtual Result<double> elapsed_ms_since(const Event& start) const = 0;
};

class Stream {
 public:
  virtual ~Stream() = default;
  virtual DeviceLoc device() const = 0;
  // Runs `task` after everything enqueued before it. A task that fails (or throws) puts the
  // stream in error: later tasks are skipped until synchronize() returns the error, which
  // clears it.
  virtual Status enqueue(std::function<Status()> task) = 0;
  // Enqueues a copy of `bytes` bytes; both ranges must stay valid until it runs.
  virtual Status copy(void* dst, const void* src, std::size_t bytes) = 0;
  // Marks the current end of this stream on `event` (re-recording moves the mark).
  virtual Status record(Event& event) = 0;
  // Work enqueued after this call waits until `event` (as recorded now) completes.
  virtual Status wait(const Event& event) = 0;
  // Blocks until all enqueued work is done; returns (and clears) the first failure.
  virtual Status synchronize() = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceLoc loc() const = 0;
  virtual const DeviceProperties& properties() const = 0;
  // The device's caching allocator (64-byte aligned, with statistics and trim()).
  virtual Allocator& allocator() = 0;
  virtual Result<std::unique_ptr<Stream>> create_stream() = 0;
  virtual Result<std::unique_ptr<Event>> create_event() = 0;
  // A stable identity for the tuning database: the same hardware (and, on the CPU, the same
  // TESSERA_MAX_ISA cap) gives the same string in every process.
  virtual std::string fingerprint() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;  // "cpu", "cuda", "hip"
  virtual int device_count() const = 0;
  virtual Device& device(int index) = 0;
};

// A backend the registry knows of: loaded, or why not.
struct BackendStatus {
  std::string name;
  bool available = false;
  std::string detail;  // where it was loaded from, or why it is unavailable
  Backend* backend = nullptr;
};

// The CPU backend first, then each plug-in tried (cuda, hip, and any named in
// TESSERA_HAL_PLUGINS). Loaded once per process; a missing plug-in is never an error.
const std::vector<BackendStatus>& backends();
// "cpu", "cpu:0", "cuda:1". kNotFound names what exists when the device does not.
Result<Device*> find_device(std::string_view spec);
Device& cpu_device();

}  // namespace tessera::hal
