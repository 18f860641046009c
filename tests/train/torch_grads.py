#!/usr/bin/python3
"""PyTorch's loss and gradients for a NetBuilder classifier: the oracle of
TrainOracle.LeNetGradientsMatchPyTorch (tests/train/parallel_test.cpp).

usage: torch_grads.py DIR
DIR holds layers.txt (one layer per line: "conv STRIDE PAD", "relu", "maxpool K", "flatten",
"linear"), p0.npy, p1.npy, ... (each conv's and linear's weight then bias, in order),
images.npy (f32 [N, C, H, W]) and labels.npy (i64 [N]). Writes loss.npy and g0.npy, g1.npy, ...:
the mean softmax cross-entropy and its gradient with respect to each parameter.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F


def main(d):
    torch.set_num_threads(1)
    with open(os.path.join(d, "layers.txt")) as f:
        layers = [line.split() for line in f if line.strip()]
    params = []
    k = 0
    while os.path.exists(os.path.join(d, f"p{k}.npy")):
        params.append(torch.tensor(np.load(os.path.join(d, f"p{k}.npy")), requires_grad=True))
        k += 1
    x = torch.tensor(np.load(os.path.join(d, "images.npy")))
    labels = torch.tensor(np.load(os.path.join(d, "labels.npy")))
    p = iter(params)
    for layer in layers:
        if layer[0] == "conv":
            x = F.conv2d(x, next(p), next(p), stride=int(layer[1]), padding=int(layer[2]))
        elif layer[0] == "relu":
            x = F.relu(x)
        elif layer[0] == "maxpool":
            x = F.max_pool2d(x, int(layer[1]))
        elif layer[0] == "flatten":
            x = torch.flatten(x, 1)
        elif layer[0] == "linear":
            x = F.linear(x, next(p), next(p))
        else:
            sys.exit(f"torch_grads.py: unknown layer {layer}")
    loss = F.cross_entropy(x, labels)
    loss.backward()
    np.save(os.path.join(d, "loss.npy"), loss.detach().numpy().astype(np.float32))
    for i, t in enumerate(params):
        np.save(os.path.join(d, f"g{i}.npy"), t.grad.numpy().astype(np.float32))


if __name__ == "__main__":
    main(sys.argv[1])
