#!/usr/bin/python3
"""Exports models to ONNX for tessera's model tests, with PyTorch's own output as the
reference: for each name, OUT/<name>/model.onnx, input.npy (a batch of one) and expected.npy
(the model's output under torch.no_grad()). The names are torchvision models (one 224x224
image; batch-norm statistics randomised too, so the folded constants are not trivial) and
"transformer" (torch.nn.TransformerEncoder: 2 layers, d_model 256, 8 heads, feed-forward
1024, a sequence of 32). Weights are random from a fixed seed (no downloads); the batch dim
is symbolic. Runs under Debian's python3-torch and python3-torchvision:

    /usr/bin/python3 tests/models/export_torchvision.py OUT resnet18 mobilenet_v2 squeezenet1_1 transformer
"""
import os
import sys

import numpy as np
import torch
import torchvision


def transformer():
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval(), torch.randn(1, 32, 256)


def export(name, out_dir):
    torch.manual_seed(0)
    if name == "transformer":
        model, x = transformer()
        opset = 14
    else:
        model = getattr(torchvision.models, name)(weights=None).eval()
        x = None
        opset = 13
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)
    if x is None:
        x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        expected = model(x)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    torch.onnx.export(model, x, os.path.join(d, "model.onnx"), input_names=["input"], output_names=["output"],
                      opset_version=opset, do_constant_folding=True,
                      dynamic_axes={"input": {0: "N"}, "output": {0: "N"}})
    np.save(os.path.join(d, "input.npy"), x.numpy())
    np.save(os.path.join(d, "expected.npy"), expected.numpy())


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    for name in sys.argv[2:]:
        export(name, sys.argv[1])


if __name__ == "__main__":
    main()
