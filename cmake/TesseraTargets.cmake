# Compiler flags shared by every tessera target, and helpers for per-ISA sources.

set(TESSERA_WARNINGS -Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor -Wno-missing-field-initializers)
set(TESSERA_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer)

# The flags of our own code (third-party headers are included as SYSTEM and stay quiet).
function(tessera_target_defaults target)
  target_compile_options(${target} PRIVATE ${TESSERA_WARNINGS})
  target_compile_features(${target} PUBLIC cxx_std_20)
  if(TESSERA_SANITIZE)
    target_compile_options(${target} PRIVATE ${TESSERA_SANITIZER_FLAGS})
    target_link_options(${target} PRIVATE ${TESSERA_SANITIZER_FLAGS})
  endif()
  if(TESSERA_FUZZ)  # coverage for libFuzzer's guidance; the fuzz_* binaries add its main
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

# Each instruction-set file is its own object with its own flags; generic code never sees them.
# GCC's generic tuning splits every unaligned 256-bit load and store in two 128-bit halves (for
# CPUs of 2011); on anything with AVX2 that costs, and where a vector array is then read back
# whole it stalls store forwarding (the 32-point FFT codelet ran 2x slower).
set(TESSERA_NO_SPLIT_FLAGS
    $<$<CXX_COMPILER_ID:GNU>:-mno-avx256-split-unaligned-load$<SEMICOLON>-mno-avx256-split-unaligned-store>)
set(TESSERA_AVX2_FLAGS -mavx2 -mfma -mf16c ${TESSERA_NO_SPLIT_FLAGS})
set(TESSERA_AVX512_FLAGS -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512bf16 -mavx512vnni
    -mfma -mf16c ${TESSERA_NO_SPLIT_FLAGS})
function(tessera_isa_sources)
  cmake_parse_arguments(ARG "" "" "AVX2;AVX512" ${ARGN})
  foreach(src IN LISTS ARG_AVX2)
    set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "${TESSERA_AVX2_FLAGS}")
  endforeach()
  # GCC 12 reports maybe-uninitialized inside its own AVX-512 intrinsic headers (masked
  # loads with a zero source) at -O1 and above: a false positive, silenced for these files.
  foreach(src IN LISTS ARG_AVX512)
    set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS
      "${TESSERA_AVX512_FLAGS};$<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>")
  endforeach()
endfunction()
