#!/usr/bin/env python3
"""bench_cnn's workloads in torch (Debian's python3-torch 1.13: functorch for vmap/grad), on the
same inputs and the same number of threads (torch.set_num_threads(OMP_NUM_THREADS or 1)).
Prints one JSON line per workload: {"name", "ms"} (median of timed runs), comparable with
bench_cnn's `ms` counter. Run both pinned to the same cores, e.g.:
  OMP_NUM_THREADS=1 taskset -c 0 build/bench/bench_cnn --benchmark_format=json
  OMP_NUM_THREADS=1 taskset -c 0 python3 bench/cnn_torch.py"""
import json
import math
import os
import statistics
import time

import torch
import torch.nn.functional as F

try:
    from torch.func import grad, vmap
except ImportError:
    from functorch import grad, vmap

torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
B = 64


def values(shape, seed, scale):
    n = math.prod(shape)
    return ((torch.arange(n, dtype=torch.float64) + 1) * 0.37 + seed).sin().mul(scale).float().reshape(shape)


p = {"conv1.weight": values([32, 1, 3, 3], 1, 1 / 3), "conv1.bias": values([32], 2, 0.1),
     "conv2.weight": values([64, 32, 3, 3], 3, 0.06), "conv2.bias": values([64], 4, 0.1),
     "fc1.weight": values([128, 9216], 5, 1 / 96), "fc1.bias": values([128], 6, 0.1),
     "fc2.weight": values([10, 128], 7, 0.09), "fc2.bias": values([10], 8, 0.1)}
x, t = values([B, 1, 28, 28], 9, 1.0), torch.tensor([i * 3 % 10 for i in range(B)])


def forward(p, x):
    h = F.conv2d(x, p["conv1.weight"], p["conv1.bias"]).relu()
    h = F.conv2d(h, p["conv2.weight"], p["conv2.bias"]).relu()
    h = F.max_pool2d(h, 2).flatten(1)
    h = F.linear(h, p["fc1.weight"], p["fc1.bias"]).relu()
    return F.log_softmax(F.linear(h, p["fc2.weight"], p["fc2.bias"]), dim=1)


def loss(p, x, t):
    return F.nll_loss(forward(p, x), t)


def example_loss(p, x, t):
    return F.nll_loss(forward(p, x.unsqueeze(0)), t.unsqueeze(0))


def autograd_grad(p, x, t):  # the usual libtorch/PyTorch way: backward()
    q = {k: v.detach().requires_grad_() for k, v in p.items()}
    loss(q, x, t).backward()
    return [v.grad for v in q.values()]


def timed(name, fn, runs=15):
    fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"name": name, "ms": statistics.median(samples), "torch": torch.__version__,
                      "threads": torch.get_num_threads()}))


with torch.no_grad():
    timed("BM_cnn_forward", lambda: forward(p, x))
timed("BM_cnn_minibatch_grad (autograd backward)", lambda: autograd_grad(p, x, t))
timed("BM_cnn_minibatch_grad", lambda: grad(loss)(p, x, t))
timed("BM_cnn_per_sample_grads", lambda: vmap(grad(example_loss), in_dims=(None, 0, 0))(p, x, t))
