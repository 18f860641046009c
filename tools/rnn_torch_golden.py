#!/usr/bin/python3
"""Writes PyTorch's LSTM and GRU outputs and gradients for random weights into
tests/data/rnn_torch/ (one .npy per array), in tessera's layouts (include/tessera/dnn/rnn.hpp),
for tests/dnn/rnn_test.cpp's TorchGolden test. Run with Debian's python3-torch:

    /usr/bin/python3 tools/rnn_torch_golden.py

PyTorch's gate order is mapped to ONNX's: LSTM i,f,g,o -> i,o,f,c; GRU r,z,n -> z,r,h (PyTorch's
GRU is ONNX's linear_before_reset = 1).
"""
import os
import sys

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rnn_torch")
S, B, I, H, LAYERS = 5, 3, 4, 6, 2
LENS = [5, 3, 1]


def reorder(t, cell):
    blocks = torch.chunk(t, 4 if cell == "lstm" else 3, dim=0)
    order = [0, 3, 1, 2] if cell == "lstm" else [1, 0, 2]
    return torch.cat([blocks[k] for k in order], dim=0)


def flat_weights(rnn, cell, grad=False):
    parts = []
    for l in range(LAYERS):
        for suffix in ["", "_reverse"]:
            for name in ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]:
                p = getattr(rnn, f"{name}_l{l}{suffix}")
                v = p.grad if grad else p.data
                parts.append(reorder(v, cell).reshape(-1))
    return torch.cat(parts).numpy().astype(np.float32)


def run(cell):
    torch.manual_seed(7 if cell == "lstm" else 11)
    cls = torch.nn.LSTM if cell == "lstm" else torch.nn.GRU
    rnn = cls(I, H, num_layers=LAYERS, bidirectional=True).float()
    with torch.no_grad():
        for p in rnn.parameters():
            p.uniform_(-0.6, 0.6)
    x = torch.empty(S, B, I).uniform_(-1, 1).requires_grad_()
    h0 = torch.empty(LAYERS * 2, B, H).uniform_(-0.5, 0.5).requires_grad_()
    c0 = torch.empty(LAYERS * 2, B, H).uniform_(-0.5, 0.5).requires_grad_()
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, LENS, enforce_sorted=False)
    if cell == "lstm":
        out, (hn, cn) = rnn(packed, (h0, c0))
    else:
        out, hn = rnn(packed, h0)
        cn = None
    y, _ = torch.nn.utils.rnn.pad_packed_sequence(out, total_length=S)
    dy = torch.empty_like(y).uniform_(0.5, 1.5)
    dhn = torch.empty_like(hn).uniform_(0.5, 1.5)
    loss = (dy * y).sum() + (dhn * hn).sum()
    dcn = None
    if cn is not None:
        dcn = torch.empty_like(cn).uniform_(0.5, 1.5)
        loss = loss + (dcn * cn).sum()
    loss.backward()
    arrays = {
        "x": x, "h0": h0, "y": y, "hn": hn, "dy": dy, "dhn": dhn, "dx": x.grad, "dh0": h0.grad,
    }
    if cell == "lstm":
        arrays.update({"c0": c0, "cn": cn, "dcn": dcn, "dc0": c0.grad})
    os.makedirs(OUT, exist_ok=True)
    for k, v in arrays.items():
        np.save(os.path.join(OUT, f"{cell}_{k}.npy"), v.detach().numpy().astype(np.float32))
    np.save(os.path.join(OUT, f"{cell}_w.npy"), flat_weights(rnn, cell))
    np.save(os.path.join(OUT, f"{cell}_dw.npy"), flat_weights(rnn, cell, grad=True))
    np.save(os.path.join(OUT, f"{cell}_lens.npy"), np.array(LENS, dtype=np.int32))


if __name__ == "__main__":
    torch.set_num_threads(1)
    for c in ["lstm", "gru"]:
        run(c)
    print("wrote", os.path.normpath(OUT), "with torch", torch.__version__, file=sys.stderr)
