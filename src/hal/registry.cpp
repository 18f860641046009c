// The backend registry: the built-in CPU backend plus GPU plug-ins opened with dlopen.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include <dlfcn.h>

#include <tessera/core/log.hpp>
#include <tessera/hal/plugin.hpp>

#include "cpu_backend.hpp"

namespace tessera::hal {
namespace {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  while (!s.empty()) {
    std::size_t at = s.find(sep);
    std::string_view part = s.substr(0, at);
    if (!part.empty()) out.emplace_back(part);
    if (at == std::string_view::npos) break;
    s.remove_prefix(at + 1);
  }
  return out;
}

// The directory libtessera.so was loaded from (plug-ins are built beside it).
std::string library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&library_dir), &info) == 0 || info.dli_fname == nullptr)
    return "";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

struct Registry {
  std::vector<std::unique_ptr<Backend>> owned;
  std::vector<BackendStatus> statuses;
};

BackendStatus load_plugin(const std::string& name, Registry& reg) {
  BackendStatus st{name, false, "", nullptr};
  const std::string file = "libtessera_" + name + ".so";
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("TESSERA_PLUGIN_PATH"))
    for (const std::string& dir : split(env, ':')) candidates.push_back(dir + "/" + file);
  if (std::string dir = library_dir(); !dir.empty()) candidates.push_back(dir + "/" + file);
  candidates.push_back(file);  // the loader's default search path

  void* handle = nullptr;
  std::string where, last_error;
  for (const std::string& path : candidates) {
    if (path.find('/') != std::string::npos && !std::filesystem::exists(path)) continue;
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      where = path;
      break;
    }
    const char* err = dlerror();
    last_error = err ? err : "dlopen failed";
  }
  if (!handle) {
    st.detail =
        last_error.empty() || last_error.find("cannot open shared object") != std::string::npos
            ? file + " not found (not built or not on TESSERA_PLUGIN_PATH)"
            : last_error;
    return st;
  }
  auto abi =
      reinterpret_cast<tessera_hal_plugin_abi_fn>(dlsym(handle, TESSERA_HAL_PLUGIN_ABI_SYMBOL));
  auto create = reinterpret_cast<tessera_hal_plugin_create_fn>(
      dlsym(handle, TESSERA_HAL_PLUGIN_CREATE_SYMBOL));
  if (!abi || !create) {
    st.detail = where + " is not a tessera plug-in (missing " +
                (abi ? TESSERA_HAL_PLUGIN_CREATE_SYMBOL : TESSERA_HAL_PLUGIN_ABI_SYMBOL) + ")";
    dlclose(handle);
    return st;
  }
  if (std::uint32_t v = abi(); v != kPluginAbiVersion) {
    st.detail = where + " has plug-in ABI version " + std::to_string(v) +
                ", this libtessera needs " + std::to_string(kPluginAbiVersion);
    dlclose(handle);
    return st;
  }
  std::string error;
  Backend* backend = create(&error);
  if (!backend) {
    st.detail = where + ": " + (error.empty() ? "backend unavailable" : error);
    // The handle stays open: the plug-in may have registered atexit work.
    return st;
  }
  reg.owned.emplace_back(backend);
  st.available = true;
  st.backend = backend;
  st.detail = where;
  return st;
}

Registry& registry() {
  // Deliberately never destroyed: plug-in backends may hold driver state that must not be
  // torn down after the driver's own static destructors have run.
  static Registry* reg = [] {
    auto* r = new Registry;
    r->owned.push_back(make_cpu_backend());
    r->statuses.push_back({"cpu", true, "built in", r->owned.back().get()});
    std::vector<std::string> names{"cuda", "hip"};
    if (const char* extra = std::getenv("TESSERA_HAL_PLUGINS"))
      for (const std::string& n : split(extra, ','))
        if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    for (const std::string& n : names) {
      r->statuses.push_back(load_plugin(n, *r));
      TESSERA_VLOG(kHal) << "backend " << n << ": "
                         << (r->statuses.back().available ? "available, " : "unavailable, ")
                         << r->statuses.back().detail;
    }
    return r;
  }();
  return *reg;
}

}  // namespace

const std::vector<BackendStatus>& backends() {
  return registry().statuses;
}

Result<Device*> find_device(std::string_view spec) {
  std::string_view name = spec;
  int index = 0;
  if (std::size_t colon = spec.find(':'); colon != std::string_view::npos) {
    name = spec.substr(0, colon);
    std::string digits(spec.substr(colon + 1));
    char* end = nullptr;
    long v = std::strtol(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0' || v < 0 || v > 1 << 20)
      return invalid_argument("device '" + std::string(spec) + "': index is not a number");
    index = static_cast<int>(v);
  }
  std::string known;
  for (const BackendStatus& st : backends()) {
    if (st.name == name) {
      if (!st.available)
        return unavailable("device '" + std::string(spec) + "': backend " + st.name +
                           " is unavailable: " + st.detail);
      if (index >= st.backend->device_count())
        return not_found("device '" + std::string(spec) + "': backend " + st.name + " has " +
                         std::to_string(st.backend->device_count()) + " device(s)");
      return &st.backend->device(index);
    }
    known += (known.empty() ? "" : ", ") + st.name;
  }
  return not_found("device '" + std::string(spec) + "': no backend named '" + std::string(name) +
                   "' (known: " + known + ")");
}

Device& cpu_device() {
  return registry().owned.front()->device(0);
}

}  // namespace tessera::hal
