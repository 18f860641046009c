#!/usr/bin/env python3
"""Writes small_cnn.onnx, the model `tessera run` runs when given none: an image classifier
of three 3x3 convolutions (with bias and ReLU; max pooling after the first two), global
average pooling and a fully connected layer with softmax, over [N, 3, 32, 32] images into 10
classes. The weights are He-initialised from a fixed seed, so the file is the same on every
run. Needs the `onnx` and `numpy` packages:

    python3 examples/models/make_small_cnn.py examples/models/small_cnn.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(path):
    rng = np.random.default_rng(20261122)
    inits, nodes = [], []

    def weight(name, shape, fan_in):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32), name))

    def bias(name, n):
        inits.append(numpy_helper.from_array((rng.standard_normal(n) * 0.05).astype(np.float32), name))

    x, channels = "image", 3
    for i, out in enumerate([16, 32, 64]):
        weight(f"conv{i}.w", (out, channels, 3, 3), channels * 9)
        bias(f"conv{i}.b", out)
        nodes.append(helper.make_node("Conv", [x, f"conv{i}.w", f"conv{i}.b"], [f"conv{i}"], name=f"conv{i}",
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"conv{i}"], [f"relu{i}"], name=f"relu{i}"))
        x = f"relu{i}"
        if i < 2:
            nodes.append(helper.make_node("MaxPool", [x], [f"pool{i}"], name=f"pool{i}", kernel_shape=[2, 2], strides=[2, 2]))
            x = f"pool{i}"
        channels = out
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["features"], name="flatten"))
    weight("fc.w", (10, 64), 64)
    bias("fc.b", 10)
    nodes.append(helper.make_node("Gemm", ["features", "fc.w", "fc.b"], ["logits"], name="fc", transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=-1))
    graph = helper.make_graph(nodes, "small_cnn",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 32, 32])],
                              [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, producer_name="tessera", opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "small_cnn.onnx")
