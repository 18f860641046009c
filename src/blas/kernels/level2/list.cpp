// The ordered list of level-2 kernel tables: the first one the CPU (under TESSERA_MAX_ISA)
// can run wins.
#include <tessera/core/cpu.hpp>
#include <tessera/core/log.hpp>

#include "kernels.hpp"

namespace tessera::blas::kernels {
namespace {

struct Level2Path {
  Isa needs;
  const Level2Kernels* table;
};
constexpr Level2Path kLevel2Paths[] = {
    {Isa::kAvx512, &kLevel2Avx512},
    {Isa::kAvx2, &kLevel2Avx2},
    {Isa::kGeneric, &kLevel2Generic},
};

}  // namespace

const Level2Kernels& level2_kernels(std::string_view fn) {
  const Isa isa = cpu_info().isa();
  for (const Level2Path& p : kLevel2Paths) {
    if (isa >= p.needs) {
      TESSERA_VLOG(kDispatch) << fn << ": chose " << p.table->name;
      return *p.table;
    }
    TESSERA_VLOG(kDispatch) << fn << ": " << p.table->name << " refused: needs "
                            << isa_name(p.needs) << ", the CPU allows " << isa_name(isa);
  }
  return kLevel2Generic;
}

}  // namespace tessera::blas::kernels
