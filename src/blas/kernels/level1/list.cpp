// The ordered list of level-1 kernel tables: the first one the CPU (under TESSERA_MAX_ISA)
// can run wins.
#include <tessera/core/cpu.hpp>
#include <tessera/core/log.hpp>

#include "kernels.hpp"

namespace tessera::blas::kernels {
namespace {

struct Level1Path {
  Isa needs;
  const Level1Kernels* table;
};
constexpr Level1Path kLevel1Paths[] = {
    {Isa::kAvx512, &kLevel1Avx512},
    {Isa::kAvx2, &kLevel1Avx2},
    {Isa::kGeneric, &kLevel1Generic},
};

}  // namespace

const Level1Kernels& level1_kernels(std::string_view fn) {
  const Isa isa = cpu_info().isa();
  for (const Level1Path& p : kLevel1Paths) {
    if (isa >= p.needs) {
      TESSERA_VLOG(kDispatch) << fn << ": chose " << p.table->name;
      return *p.table;
    }
    TESSERA_VLOG(kDispatch) << fn << ": " << p.table->name << " refused: needs "
                            << isa_name(p.needs) << ", the CPU allows " << isa_name(isa);
  }
  return kLevel1Generic;
}

}  // namespace tessera::blas::kernels
