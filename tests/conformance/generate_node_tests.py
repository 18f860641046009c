#!/usr/bin/env python3
"""Writes the ONNX backend node tests of the installed `onnx` package to a folder.

Each case becomes OUT/<name>/model.onnx plus OUT/<name>/test_data_set_<i>/{input,output}_<j>.pb,
the layout of the node tests in ONNX's repository, which `tessera conformance OUT` runs.
The cases come from the package's own test generators (onnx.backend.test.case.node), so the
set follows the onnx version installed; nothing here is committed but this script.
"""
import os
import shutil
import sys

import onnx
from onnx import numpy_helper
from onnx.backend.test.case import node as node_cases


def serialize(value, value_info):
    kind = value_info.type.WhichOneof("value")
    if kind == "sequence_type":
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if kind == "map_type":
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    if isinstance(value, onnx.TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, value_info.name).SerializeToString()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: generate_node_tests.py OUT_DIR")
    out = sys.argv[1]
    tmp = out + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    cases = node_cases.collect_testcases()
    for case in cases:
        case_dir = os.path.join(tmp, case.name)
        os.makedirs(case_dir, exist_ok=True)
        with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            data_dir = os.path.join(case_dir, f"test_data_set_{i}")
            os.makedirs(data_dir)
            for j, value in enumerate(inputs):
                with open(os.path.join(data_dir, f"input_{j}.pb"), "wb") as f:
                    f.write(serialize(value, graph.input[j]))
            for j, value in enumerate(outputs):
                with open(os.path.join(data_dir, f"output_{j}.pb"), "wb") as f:
                    f.write(serialize(value, graph.output[j]))
    with open(os.path.join(tmp, "ONNX_VERSION"), "w") as f:
        f.write(onnx.__version__ + "\n")
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    print(f"generate_node_tests: {len(cases)} node tests of onnx {onnx.__version__} in {out}")


if __name__ == "__main__":
    main()
