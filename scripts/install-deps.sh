#!/usr/bin/env bash
# Installs the Debian 12 packages tessera needs to build and test. Idempotent: quiet and
# quick when everything is present. Run as root (or with sudo available).
set -euo pipefail

packages=(
  g++                  # GCC 12: the C++20 compiler of every target
  cmake                # the build (presets need 3.25, Debian 12 ships 3.25)
  ninja-build          # the generator the presets use
  clang                # the libFuzzer build (the `fuzz` preset; CI fuzzes the ONNX loader)
  libclang-rt-14-dev   # libFuzzer and clang's sanitizer runtimes
  ccache               # compiler cache named by the presets (CMAKE_CXX_COMPILER_LAUNCHER)
  libsqlite3-dev       # the tuning database (src/tune)
  nlohmann-json3-dev   # JSON for tuning-db export/import and `--json` output
  libcli11-dev         # command-line parsing of tools/tessera
  libprotobuf-dev      # protobuf, the ONNX model format's encoding (src/graph)
  libonnx-dev          # the ONNX schema's generated protobuf classes (libonnx_proto) for ONNX import
  zlib1g-dev           # gzip-compressed IDX datasets (src/train)
  libopenmpi-dev       # MPI for data-parallel training across processes (src/train)
  openmpi-bin          # mpirun: `mpirun -np 2 tessera train` and its test
  dataset-fashion-mnist # Fashion-MNIST, the training demo's and tests' data (/usr/share/datasets/fashion-mnist)
  libgtest-dev         # unit tests
  libbenchmark-dev     # micro-benchmarks in bench/
  python3-venv         # the test-time virtual environment (scripts/test-venv.sh) with PyPI's newest onnx
  python3-numpy        # test oracle: .npy files written and checked by numpy (Debian's /usr/bin/python3)
  python3-torch        # test oracle: PyTorch's outputs for the exported models, and the RNN bench anchor
  python3-torchvision  # test oracle: torchvision models exported to ONNX at test time (tests/models)
  libopenblas0-pthread # BLAS test oracle and bench anchor, dlopen'ed by tests and `tessera bench` only
  libblis4-pthread     # BLAS bench anchor (BLIS), dlopen'ed by `tessera bench` only
  libdnnl-dev          # DNN bench anchor and test oracle (oneDNN), dlopen'ed by `tessera bench dnn` only
  libfftw3-single3     # FFT bench anchor (FFTW, single precision), dlopen'ed by `tessera bench fft` only
  libfftw3-double3     # FFT bench anchor (FFTW, double precision), dlopen'ed by `tessera bench fft` only
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
