#!/usr/bin/env bash
# Training throughput, side by side: `tessera train` and PyTorch (Debian's python3-torch, the
# same network: Caffe's LeNet, the MLP, resnet-small or the row LSTM, AdamW, batch 64) on the same Fashion-MNIST samples
# and thread count. Samples per second over one epoch of the first N training images.
#   scripts/bench-train.sh [BUILD_DIR] [THREADS] [SAMPLES] [MODEL]
set -euo pipefail
build=${1:-build/release}
threads=${2:-2}
samples=${3:-12800}
model=${4:-lenet}
tess=$("$build/bin/tessera" train --model "$model" --limit "$samples" --threads "$threads" --json |
       /usr/bin/python3 -c "import json,sys; print(round(json.load(sys.stdin)['epochs'][0]['samples_per_second']))")
torch_sps=$(/usr/bin/python3 - "$threads" "$samples" "$model" <<'PY'
import gzip, sys, time, numpy as np, torch
threads, samples, model = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
torch.set_num_threads(threads)
torch.manual_seed(1)
with gzip.open("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz") as f:
    x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)[:samples].astype(np.float32) / 255
with gzip.open("/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz") as f:
    y = np.frombuffer(f.read(), np.uint8, offset=8)[:samples].astype(np.int64)
x, y = torch.from_numpy(x), torch.from_numpy(y)
nn = torch.nn
if model == "lenet":
    net = nn.Sequential(nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))
elif model == "resnet-small":  # NetBuilder's residual blocks: conv (with bias) + batch norm
    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1), nn.BatchNorm2d(cout))
            self.c2 = nn.Sequential(nn.Conv2d(cout, cout, 3, 1, 1), nn.BatchNorm2d(cout))
            self.proj = nn.Sequential(nn.Conv2d(cin, cout, 1, stride), nn.BatchNorm2d(cout)) if cin != cout or stride != 1 else None
        def forward(self, x):
            y = self.c2(torch.relu(self.c1(x)))
            return torch.relu(y + (self.proj(x) if self.proj is not None else x))
    net = nn.Sequential(nn.Conv2d(1, 16, 3, 1, 1), nn.ReLU(), Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
elif model == "lstm":  # the image's 28 rows as a sequence, the last hidden state classified
    class RowLstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm, self.fc = nn.LSTM(28, 128, batch_first=True), nn.Linear(128, 10)
        def forward(self, x):
            return self.fc(self.lstm(x.reshape(-1, 28, 28))[1][0][0])
    net = RowLstm()
else:
    net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0)
loss_fn = nn.CrossEntropyLoss()
order = torch.randperm(samples)
t0 = time.perf_counter()
n = 0
for b in range(samples // 64):
    idx = order[b * 64:(b + 1) * 64]
    opt.zero_grad()
    loss = loss_fn(net(x[idx]), y[idx])
    loss.backward()
    opt.step()
    n += 64
print(round(n / (time.perf_counter() - t0)))
PY
)
ratio=$(/usr/bin/python3 -c "print(f'{$torch_sps / $tess:.2f}')")
printf "%-8s threads %s samples %s: tessera %s samples/s, PyTorch %s samples/s, time ratio (tessera / PyTorch) %s\n" \
  "$model" "$threads" "$samples" "$tess" "$torch_sps" "$ratio"
