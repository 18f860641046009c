// Pooling kernels in plain C++ (one-lane traits of ../norm/simd_generic.inc): the same bodies
// as the AVX2 and AVX-512 files, for CPUs (or TESSERA_MAX_ISA caps) without them.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels.hpp"

namespace tessera::dnn::pool {
namespace {

// The vector traits, then the kernel bodies written against them (order matters).
#include "../norm/simd_generic.inc"
// (kernel bodies)
#include "body.inc"

}  // namespace

const PoolKernels kPoolGeneric = make_pool_kernels("generic");

}  // namespace tessera::dnn::pool
