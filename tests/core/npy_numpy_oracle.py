#!/usr/bin/python3
"""numpy as the oracle for tessera's .npy reader and writer (driven by tests/core/npy_test.cpp).

  npy_numpy_oracle.py write DIR   numpy writes the files write() lists into DIR
  npy_numpy_oracle.py check DIR   numpy loads the files tessera wrote into DIR and checks them

Every file holds value(k) for k = 0..n-1 in C order (shape (2, 3, 4) unless noted); the C++
test computes the same values. Exit status 0 when every check passes, 1 otherwise.
"""
import ast
import struct
import sys
from pathlib import Path

import numpy as np

SHAPE = (2, 3, 4)
# tessera name -> numpy type code; bf16 has no numpy dtype (tessera writes descr 'bfloat16').
CODES = {"bool": "b1", "i8": "i1", "u8": "u1", "i32": "i4", "i64": "i8", "f16": "f2",
         "f32": "f4", "f64": "f8", "c64": "c8", "c128": "c16", "i16": "i2", "u16": "u2", "u32": "u4",
         "u64": "u8"}


def values(name, shape=SHAPE):
    """The deterministic contents of a file of dtype `name` (also computed by npy_test.cpp)."""
    k = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if name == "bool":
        return k % 3 == 0
    if name == "i8":
        return (k * 7 - 80).astype(np.int8)
    if name == "u8":
        return (k * 10 + 5).astype(np.uint8)
    if name == "i32":
        return (k * 100003 - 1000000).astype(np.int32)
    if name == "i64":
        return k * (1 << 40) - 3
    if name == "i16":
        return (k * 1001 - 12000).astype(np.int16)
    if name == "u16":
        return (k * 2731 + 7).astype(np.uint16)
    if name == "u32":
        return (k * 150000007 + 11).astype(np.uint32)
    if name == "u64":
        return (k.astype(np.uint64) * np.uint64(1 << 59) + np.uint64(13)).astype(np.uint64)
    real = k * 0.5 - 3.625  # exact in f16, bf16, f32 and f64
    if name in ("c64", "c128"):
        return (real - 0.25j * k).astype(CODES[name].replace("c", "<c"))
    return real.astype("<" + CODES.get(name, "f4"))


def write(out):
    for name, code in CODES.items():
        v = values(name)
        if code[1:] == "1":
            np.save(out / f"{name}.npy", v)
        else:
            np.save(out / f"{name}_le.npy", v.astype("<" + code))
            np.save(out / f"{name}_be.npy", v.astype(">" + code))
    np.save(out / "f64_fortran.npy", np.asfortranarray(values("f64")))
    np.save(out / "i32_fortran_be.npy", np.asfortranarray(values("i32").astype(">i4")))
    np.save(out / "f32_scalar.npy", np.array(2.5, dtype="<f4"))
    np.save(out / "f32_empty.npy", np.zeros((0, 3), dtype="<f4"))
    for version in (2, 3):
        with open(out / f"f32_v{version}.npy", "wb") as f:
            np.lib.format.write_array(f, values("f32"), version=(version, 0))
    return 0


def load_bfloat16(path):
    """numpy cannot load descr 'bfloat16': parse the header here, widen the data to f32."""
    raw = path.read_bytes()
    assert raw[:6] == b"\x93NUMPY", "bad magic"
    if raw[6] == 1:
        (hlen,), start = struct.unpack("<H", raw[8:10]), 10
    else:
        (hlen,), start = struct.unpack("<I", raw[8:12]), 12
    header = ast.literal_eval(raw[start:start + hlen].decode("latin1"))
    assert header["descr"] == "bfloat16", header
    assert header["fortran_order"] is False, header
    bits = np.frombuffer(raw[start + hlen:], dtype="<u2")
    return (bits.astype(np.uint32) << 16).view(np.float32).reshape(header["shape"])


def same_bits(a, b):
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def check(out):
    failures = []

    def expect(file, got, want, descr):
        if descr is not None and got.dtype.str != descr:
            failures.append(f"{file}: dtype {got.dtype.str}, expected {descr}")
        elif got.shape != want.shape:
            failures.append(f"{file}: shape {got.shape}, expected {want.shape}")
        elif not same_bits(got, want.astype(got.dtype)):
            failures.append(f"{file}: values differ\n  got  {got.ravel()}\n  want {want.ravel()}")

    for name, code in CODES.items():
        descr = ("|" if code[1:] == "1" else "<") + code
        expect(f"{name}.npy", np.load(out / f"{name}.npy"), values(name), descr)
    expect("bf16.npy", load_bfloat16(out / "bf16.npy"), values("f32"), None)
    expect("f32_scalar.npy", np.load(out / "f32_scalar.npy"), np.array(2.5, "<f4"), "<f4")
    expect("f32_empty.npy", np.load(out / "f32_empty.npy"), np.zeros((0, 3), "<f4"), "<f4")
    # tessera wrote permute(values(f64, (4, 3, 2)), [2, 1, 0]) in logical order.
    expect("f64_permuted.npy", np.load(out / "f64_permuted.npy"),
           values("f64", (4, 3, 2)).transpose(2, 1, 0), "<f8")
    for f in failures:
        print("MISMATCH", f)
    return 1 if failures else 0


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        print(__doc__)
        return 2
    out = Path(sys.argv[2])
    return write(out) if sys.argv[1] == "write" else check(out)


if __name__ == "__main__":
    sys.exit(main())
