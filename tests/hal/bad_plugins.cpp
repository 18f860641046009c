// Broken plug-ins for the registry test: with TESSERA_BAD_PLUGIN_ABI, one that reports another
// ABI version; without it, a shared object that exports no entry points at all.
#include <cstdint>
#include <string>

#ifdef TESSERA_BAD_PLUGIN_ABI
extern "C" std::uint32_t tessera_hal_plugin_abi() {
  return 9999;
}
extern "C" void* tessera_hal_plugin_create(std::string*) {
  return nullptr;
}
#else
extern "C" int tessera_not_a_plugin() {
  return 0;
}
#endif
