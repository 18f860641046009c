// This machine's arithmetic peak per core, measured once per run with register-only
// multiply-add loops (peak_avx512.cpp, peak_avx2.cpp, a plain C++ fallback).
#pragma once

#include <string>

namespace tessera::cli {

struct Peak {
  std::string isa;  // the instruction set of the f32/f64 loops: "avx512", "avx2", "generic"
  // Giga-operations per second of one core (an FMA counts as two); 0 where the CPU has no
  // instruction for it (bf16: AVX512-BF16 vdpbf16ps; int8: AVX512-VNNI vpdpbusd).
  double f32 = 0, f64 = 0, bf16 = 0, int8 = 0;
};

// The peak of the hardware, measured on the first call (some 30 ms): the widest instruction
// set the CPU and the operating system support, regardless of TESSERA_MAX_ISA, which caps
// tessera's kernels but not the machine.
const Peak& machine_peak();

}  // namespace tessera::cli
