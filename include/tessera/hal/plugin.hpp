// The contract between libtessera and a GPU backend plug-in (libtessera_<name>.so).
//
// A plug-in exports two C symbols. The registry looks for it in each directory of
// TESSERA_PLUGIN_PATH (colon-separated), then beside libtessera.so, then on the loader's
// default path. A plug-in that is missing, fails to load, reports another ABI version or
// finds no driver/device is listed as unavailable with the reason.
#pragma once

#include <cstdint>
#include <string>

#include <tessera/hal/hal.hpp>

namespace tessera::hal {

inline constexpr std::uint32_t kPluginAbiVersion = 1;

}  // namespace tessera::hal

extern "C" {
// Returns kPluginAbiVersion the plug-in was built against.
using tessera_hal_plugin_abi_fn = std::uint32_t (*)();
// Creates the backend (ownership passes to the caller), or returns null and sets *error to
// why not (e.g. "libcuda.so.1 not found", "no CUDA device").
using tessera_hal_plugin_create_fn = tessera::hal::Backend* (*)(std::string* error);
}

#define TESSERA_HAL_PLUGIN_ABI_SYMBOL "tessera_hal_plugin_abi"
#define TESSERA_HAL_PLUGIN_CREATE_SYMBOL "tessera_hal_plugin_create"
