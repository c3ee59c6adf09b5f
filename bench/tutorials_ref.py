#!/usr/bin/env python3
"""The workloads of bench_tutorials.cpp in torch.func (functorch, Debian's python3-torch) and in JAX
with jax.jit, on the same inputs; run by run_tutorials.sh, which pins all three systems to one core.

  tutorials_ref.py torch|jax [--filter S] [--min-time S] [--check DIR]
      one JSON line per workload: median µs per call; with --check, the largest difference from
      the outputs bench_tutorials --out DIR wrote, relative to the largest reference value
  tutorials_ref.py table FILE...
      the JSON lines of the three systems as a table of times and ratios, the worst ratio last
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np

B, D = 64, 16


def values(shape, seed, scale):
    """sin(0.37 * (i + 1) + seed) * scale in float64, stored as float32 (bench_tutorials' values())."""
    n = int(np.prod(shape))
    return (np.sin(0.37 * np.arange(1, n + 1, dtype=np.float64) + seed) * scale).astype(np.float32).reshape(shape)


def labels(n):
    return (np.arange(n) * 3 % 10).astype(np.int64)


def mlp_inputs():
    p = [values((128, 784), 1, 1 / 28), values((128,), 2, 0.1), values((10, 128), 3, 1 / 11), values((10,), 4, 0.1)]
    return p, values((B, 784), 5, 1.0), labels(B)


def predict_inputs(out, inp, batch=None):
    w = values((out, inp), 1, 1 / math.sqrt(inp))
    b = values((out,), 2, 0.1)
    x = values((inp,) if batch is None else (batch, inp), 3, 1.0)
    return w, b, x


def small_inputs(batch=None):
    w = values((D, D), 1, 0.25)
    return w, values((D,), 2, 0.1), values((D,) if batch is None else (batch, D), 3, 1.0)


def ensemble_inputs():
    m = 10
    p = [values((m, 128, 784), 1, 1 / 28), values((m, 128), 2, 0.1), values((m, 128, 128), 3, 1 / 11),
         values((m, 128), 4, 0.1), values((m, 10, 128), 5, 1 / 11), values((m, 10), 6, 0.1)]
    return p, values((B, 784), 7, 1.0)


def cnn_inputs():
    p = [values((32, 1, 3, 3), 1, 1 / 3), values((32,), 2, 0.1), values((64, 32, 3, 3), 3, 0.06), values((64,), 4, 0.1),
         values((128, 9216), 5, 1 / 96), values((128,), 6, 0.1), values((10, 128), 7, 0.09), values((10,), 8, 0.1)]
    return p, values((B, 1, 28, 28), 9, 1.0), labels(B)


def torch_workloads():
    import torch
    import torch.nn.functional as F
    from functorch import grad, hessian, jacfwd, jacrev, jvp, vmap

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    t = torch.from_numpy

    def mlp_loss(p, x, target):
        h = F.relu(F.linear(x.unsqueeze(0), p[0], p[1]))
        return F.cross_entropy(F.linear(h, p[2], p[3]), target.unsqueeze(0))

    def predict(w, b, x):
        return torch.tanh(F.linear(x, w, b))

    def predict_sum(w, b, x):
        return predict(w, b, x).sum()

    def mlp3(p, x):
        h = F.relu(F.linear(x, p[0], p[1]))
        h = F.relu(F.linear(h, p[2], p[3]))
        return F.linear(h, p[4], p[5])

    def sin_cos(x):
        return (x.sin() * x.cos()).sum()

    def cnn_loss(p, x, target):
        h = F.relu(F.conv2d(x.unsqueeze(0), p[0], p[1]))
        h = F.relu(F.conv2d(h, p[2], p[3]))
        h = F.max_pool2d(h, 2).flatten(1)
        h = F.relu(F.linear(h, p[4], p[5]))
        return F.nll_loss(F.linear(h, p[6], p[7]).log_softmax(1), target.unsqueeze(0))

    def jac(name, transform, inputs):
        w, b, x = map(t, inputs)
        return name, lambda: [transform(predict, argnums=2)(w, b, x)]

    p, x, target = mlp_inputs()
    p, x, target = [t(a) for a in p], t(x), t(target)
    psg = vmap(grad(mlp_loss), in_dims=(None, 0, 0))
    yield "per_sample_grads_mlp", lambda: psg(p, x, target)
    yield jac("jacrev_predict_D16", jacrev, small_inputs())
    yield jac("jacfwd_predict_D16", jacfwd, small_inputs())
    w, b, xb = map(t, small_inputs(B))
    vjr = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
    yield "vmap_jacrev_predict_B64_D16", lambda: [vjr(w, b, xb)]
    w, b, x1 = map(t, small_inputs())
    hs = hessian(predict_sum, argnums=2)
    yield "hessian_predict_sum_D16", lambda: [hs(w, b, x1)]
    yield jac("jacfwd_tall_2048x32", jacfwd, predict_inputs(2048, 32))
    yield jac("jacrev_tall_2048x32", jacrev, predict_inputs(2048, 32))
    yield jac("jacfwd_wide_32x2048", jacfwd, predict_inputs(32, 2048))
    yield jac("jacrev_wide_32x2048", jacrev, predict_inputs(32, 2048))
    ep, ex = ensemble_inputs()
    ep, ex = [t(a) for a in ep], t(ex)
    ens = vmap(mlp3, in_dims=(0, None))
    yield "ensemble_mlp_M10_B64", lambda: [ens(ep, ex)]
    hx, hv = t(values((4096,), 1, 1.0)), t(values((4096,), 2, 1.0))
    yield "hvp_4096", lambda: list(jvp(grad(sin_cos), (hx,), (hv,)))
    cp, cx, ct = cnn_inputs()
    cp, cx, ct = [t(a) for a in cp], t(cx), t(ct)
    cnn = vmap(grad(cnn_loss), in_dims=(None, 0, 0))
    yield "per_sample_grads_cnn", lambda: cnn(cp, cx, ct)


def jax_workloads():
    import jax
    import jax.numpy as jnp
    from jax import grad, hessian, jacfwd, jacrev, jit, jvp, lax, vmap

    def linear(x, w, b):
        return x @ w.T + b

    def mlp_loss(p, x, target):
        h = jax.nn.relu(linear(x[None], p[0], p[1]))
        return -jax.nn.log_softmax(linear(h, p[2], p[3]))[0, target]

    def predict(w, b, x):
        return jnp.tanh(linear(x, w, b))

    def predict_sum(w, b, x):
        return predict(w, b, x).sum()

    def mlp3(p, x):
        h = jax.nn.relu(linear(x, p[0], p[1]))
        h = jax.nn.relu(linear(h, p[2], p[3]))
        return linear(h, p[4], p[5])

    def sin_cos(x):
        return (jnp.sin(x) * jnp.cos(x)).sum()

    def conv(x, w, b):
        y = lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return y + b[None, :, None, None]

    def cnn_loss(p, x, target):
        h = jax.nn.relu(conv(x[None], p[0], p[1]))
        h = jax.nn.relu(conv(h, p[2], p[3]))
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID").reshape(1, -1)
        h = jax.nn.relu(linear(h, p[4], p[5]))
        return -jax.nn.log_softmax(linear(h, p[6], p[7]))[0, target]

    def run(f, *args):
        return lambda: jax.block_until_ready(f(*args))

    def jac(name, transform, inputs):
        return name, run(jit(lambda w, b, x: [transform(predict, argnums=2)(w, b, x)]), *map(jnp.asarray, inputs))

    p, x, target = mlp_inputs()
    yield "per_sample_grads_mlp", run(jit(vmap(grad(mlp_loss), in_axes=(None, 0, 0))), [jnp.asarray(a) for a in p],
                                      jnp.asarray(x), jnp.asarray(target))
    yield jac("jacrev_predict_D16", jacrev, small_inputs())
    yield jac("jacfwd_predict_D16", jacfwd, small_inputs())
    vjr = jit(lambda w, b, x: [vmap(jacrev(predict, argnums=2), in_axes=(None, None, 0))(w, b, x)])
    yield "vmap_jacrev_predict_B64_D16", run(vjr, *map(jnp.asarray, small_inputs(B)))
    yield "hessian_predict_sum_D16", run(jit(lambda w, b, x: [hessian(predict_sum, argnums=2)(w, b, x)]),
                                         *map(jnp.asarray, small_inputs()))
    yield jac("jacfwd_tall_2048x32", jacfwd, predict_inputs(2048, 32))
    yield jac("jacrev_tall_2048x32", jacrev, predict_inputs(2048, 32))
    yield jac("jacfwd_wide_32x2048", jacfwd, predict_inputs(32, 2048))
    yield jac("jacrev_wide_32x2048", jacrev, predict_inputs(32, 2048))
    ep, ex = ensemble_inputs()
    yield "ensemble_mlp_M10_B64", run(jit(lambda p, x: [vmap(mlp3, in_axes=(0, None))(p, x)]),
                                      [jnp.asarray(a) for a in ep], jnp.asarray(ex))
    hvp = jit(lambda x, v: list(jvp(grad(sin_cos), (x,), (v,))))
    yield "hvp_4096", run(hvp, jnp.asarray(values((4096,), 1, 1.0)), jnp.asarray(values((4096,), 2, 1.0)))
    cp, cx, ct = cnn_inputs()
    yield "per_sample_grads_cnn", run(jit(vmap(grad(cnn_loss), in_axes=(None, 0, 0))), [jnp.asarray(a) for a in cp],
                                      jnp.asarray(cx), jnp.asarray(ct))


def median_us(fn, min_time):
    """bench_tutorials' timing: a warm-up, then 15 samples of about min_time / 15; their median."""
    def timed(calls):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return time.perf_counter() - t0
    once = min(timed(3) / 3, timed(1))
    calls = max(1, int(min_time / 15 / max(once, 1e-9)))
    return float(np.median([timed(calls) * 1e6 / calls for _ in range(15)]))


def difference(outputs, directory, name):
    """The largest difference from bench_tutorials' outputs, relative to the largest reference value."""
    with open(os.path.join(directory, name + ".json")) as f:
        shapes = json.load(f)
    if len(shapes) != len(outputs):
        return math.inf
    worst = 0.0
    for k, (shape, out) in enumerate(zip(shapes, outputs)):
        ref = np.asarray(out, dtype=np.float64)
        got = np.fromfile(os.path.join(directory, f"{name}.{k}.f32"), dtype=np.float32).astype(np.float64)
        if list(ref.shape) != shape:
            return math.inf
        scale = max(np.abs(ref).max(initial=0.0), 1e-30)
        worst = max(worst, np.abs(got.reshape(ref.shape) - ref).max(initial=0.0) / scale)
    return worst


def measure(system, args):
    label = {"torch": "torch.func", "jax": "jax.jit"}[system]
    workloads = torch_workloads() if system == "torch" else jax_workloads()
    failed = False
    for name, fn in workloads:
        if args.filter and args.filter not in name:
            continue
        line = {"system": label, "workload": name}
        if args.check:
            line["rel_diff"] = difference([np.asarray(o) for o in fn()], args.check, name)
            failed |= not line["rel_diff"] <= 1e-3
        line["median_us"] = round(median_us(fn, args.min_time), 2)
        print(json.dumps(line), flush=True)
    return 1 if failed else 0


def table(files):
    rows, floors, order = {}, {}, []
    for path in files:
        with open(path) as f:
            for text in f:
                if not text.startswith('{"system"'):
                    continue
                line = json.loads(text)
                if line["workload"] not in order:
                    order.append(line["workload"])
                rows[(line["workload"], line["system"])] = line
                if "floor_us" in line:
                    floors[line["workload"]] = line["floor_us"]
    print(f"{'workload':30} {'funcgen µs':>11} {'floor µs':>9} {'torch.func':>11} {'jax.jit':>10} "
          f"{'torch/fg':>9} {'jax/fg':>7} {'fg/floor':>8}")
    worst = None
    for name in order:
        fg = rows.get((name, "funcgen"), {}).get("median_us")
        tf = rows.get((name, "torch.func"), {}).get("median_us")
        jx = rows.get((name, "jax.jit"), {}).get("median_us")
        floor = floors.get(name)

        def ratio(a, b):
            return f"{a / b:.2f}" if a and b else "-"

        def num(v):
            return f"{v:.1f}" if v else "-"
        print(f"{name:30} {num(fg):>11} {num(floor):>9} {num(tf):>11} {num(jx):>10} {ratio(tf, fg):>9} "
              f"{ratio(jx, fg):>7} {ratio(fg, floor):>8}")
        if fg and jx and (worst is None or jx / fg < worst[1]):
            worst = (name, jx / fg)
    if worst:
        print(f"worst ratio to jax.jit: {worst[0]} {worst[1]:.2f} (jax.jit µs / funcgen µs; above 1: funcgen is faster)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["torch", "jax", "table"])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--filter", default="")
    parser.add_argument("--min-time", type=float, default=0.5)
    parser.add_argument("--check", default="")
    args = parser.parse_args()
    if args.mode == "table":
        table(args.files)
        return 0
    return measure(args.mode, args)


if __name__ == "__main__":
    sys.exit(main())
