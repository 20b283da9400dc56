#!/usr/bin/python3
"""Writes the golden .npy fixtures beside this script, with NumPy.

Run it with Debian's Python, which sees python3-numpy:

    /usr/bin/python3 tests/data/make_fixtures.py

The files are checked in; tests/storage/npy/npy_format_test.cc and tests/storage/array/array_file_test.cc
hold the values they expect, written out by hand, so a change in momenta's
reader (or in this script) shows up as a failing test. Never rewrite a fixture
that tests already use: add a new one. They were made with NumPy 1.24.2, whose
np.save writes format 1.0 with the data at byte 128.

Fixtures momenta must read:
  f8.npy f4.npy i8.npy i4.npy i2.npy i1.npy u8.npy u4.npy u2.npy u1.npy
      1-D, one per dtype, with the type's extremes (see VALUES below)
  c_order_i4_3x4.npy   np.arange(12).reshape(3, 4), C order
  scalar_f8.npy        a 0-d array holding 3.5 (shape ())
  empty_f8.npy         shape (0,)
  v2_f8.npy            format 2.0 header (u32 header length), [1.0, 2.0, 3.0]
  v3_u2.npy            format 3.0 header (UTF-8 dict), [1, 2, 65535]

Fixtures momenta must reject, each with its own message:
  reject_big_endian_f8.npy    descr '>f8'
  reject_fortran_f8.npy       fortran_order True (a 2x3 Fortran-order array)
  reject_structured.npy       descr is a list of fields
  reject_object.npy           descr '|O' (needs allow_pickle)
  reject_bool.npy             descr '|b1'
  reject_complex128.npy       descr '<c16'
  reject_truncated_f8.npy     header says 10 elements, only 3 are there
  reject_garbage_header.npy   valid preamble, the dict is not a Python literal
  reject_bad_magic.npy        does not start with \\x93NUMPY
"""

import io
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

F32_MAX = float(np.finfo(np.float32).max)
VALUES = {
    "f8": [0.0, -0.0, 1.5, -2.25, 1e308, 5e-324, float("nan"), float("inf"), float("-inf"), 0.1],
    "f4": [0.0, -0.0, 1.5, -2.25, F32_MAX, 1e-45, float("nan"), float("inf"), float("-inf"), 0.1],
    "i8": [0, 1, -1, -(2**63), 2**63 - 1, 42],
    "i4": [0, 1, -1, -(2**31), 2**31 - 1, 42],
    "i2": [0, 1, -1, -(2**15), 2**15 - 1, 42],
    "i1": [0, 1, -1, -128, 127, 42],
    "u8": [0, 1, 2**64 - 1, 2**63, 42],
    "u4": [0, 1, 2**32 - 1, 2**31, 42],
    "u2": [0, 1, 2**16 - 1, 2**15, 42],
    "u1": [0, 1, 255, 128, 42],
}


def path(name):
    return os.path.join(HERE, name)


def save(name, arr, version=None):
    with open(path(name), "wb") as f:
        if version is None:
            np.save(f, arr, allow_pickle=arr.dtype.hasobject)
        else:
            np.lib.format.write_array(f, arr, version=version)


def main():
    for code, values in VALUES.items():
        save(code + ".npy", np.array(values, dtype="<" + code))
    save("c_order_i4_3x4.npy", np.arange(12, dtype="<i4").reshape(3, 4))
    save("scalar_f8.npy", np.array(3.5, dtype="<f8"))
    save("empty_f8.npy", np.zeros((0,), dtype="<f8"))
    save("v2_f8.npy", np.array([1.0, 2.0, 3.0], dtype="<f8"), version=(2, 0))
    save("v3_u2.npy", np.array([1, 2, 65535], dtype="<u2"), version=(3, 0))

    save("reject_big_endian_f8.npy", np.array([1.0, 2.0], dtype=">f8"))
    save("reject_fortran_f8.npy", np.asfortranarray(np.arange(6, dtype="<f8").reshape(2, 3)))
    save("reject_structured.npy", np.zeros(2, dtype=[("a", "<i4"), ("b", "<f8")]))
    save("reject_object.npy", np.array([1, "two", None], dtype=object))
    save("reject_bool.npy", np.array([True, False]))
    save("reject_complex128.npy", np.array([1 + 2j], dtype="<c16"))

    # Truncated: the header of a 10-element f8 array followed by 3 elements.
    buf = io.BytesIO()
    np.save(buf, np.arange(10, dtype="<f8"))
    whole = buf.getvalue()
    with open(path("reject_truncated_f8.npy"), "wb") as f:
        f.write(whole[: len(whole) - 7 * 8])

    # Garbage header: NumPy's preamble (v1.0, length 118) and 118 bytes that
    # are no Python literal.
    dict_bytes = b"{'descr': <f8, 'fortran_order': False, 'shape': (3,), }"
    dict_bytes += b" " * (118 - len(dict_bytes) - 1) + b"\n"
    with open(path("reject_garbage_header.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(dict_bytes).to_bytes(2, "little") + dict_bytes)
        f.write(bytes(24))

    with open(path("reject_bad_magic.npy"), "wb") as f:
        f.write(b"PK\x03\x04 this is a zip file, not an array\n")


if __name__ == "__main__":
    main()
