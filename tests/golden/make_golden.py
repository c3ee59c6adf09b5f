#!/usr/bin/env python3
"""Computes with torch.func (functorch on Debian's python3-torch) the values that
tests/generator/ad/test_golden.cpp checks funcgen's generated code against.

Run: /usr/bin/python3 tests/golden/make_golden.py > tests/golden/torch_func_golden.json
Inputs are deterministic (input() below; the C++ side builds the same ones), float64. It also
writes what samples/per_sample_grads, per_sample_grads_cnn, neural_tangent_kernels and
jacobians_hessians print, computed here with torch.func, as their expected_output.txt (the
end-to-end test compares)."""
import json
import math
import os

import torch
import torch.nn.functional as F

try:  # torch >= 2.0
    from torch.func import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp, vmap
except ImportError:  # torch 1.13 (Debian 12): functorch
    from functorch import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp, vmap
    linearize = None

torch.set_default_dtype(torch.float64)


def input(shape, seed):
    """x[i] = sin(0.37 * (i + 1) + seed) * 0.8 over the flattened shape: the same in C++."""
    n = math.prod(shape)
    return torch.tensor([math.sin(0.37 * (i + 1) + seed) * 0.8 for i in range(n)]).reshape(shape)


def enc(t):
    t = t.detach()
    return {"shape": list(t.shape), "data": [float(v) for v in t.reshape(-1).tolist()]}


cases = {}

# per-sample gradients
IN, HID, OUT, N = 8, 16, 4, 6
w1, b1 = input([HID, IN], 1), input([HID], 2)
w2, b2 = input([OUT, HID], 3), input([OUT], 4)
xs = input([N, IN], 5)
targets = torch.tensor([i % OUT for i in range(N)])


def model(params, x):
    w1, b1, w2, b2 = params
    return F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)


def compute_loss(params, x, t):  # as the tutorial: one example as a batch of one
    return F.cross_entropy(model(params, x.unsqueeze(0)), t.unsqueeze(0))


psg = vmap(grad(compute_loss), in_dims=(None, 0, 0))((w1, b1, w2, b2), xs, targets)
cases["per_sample_grads"] = {"outputs": [enc(g) for g in psg],
                             "norms": [float(torch.cat([g[i].reshape(-1) for g in psg]).norm()) for i in range(N)]}
eg = grad(compute_loss)((w1, b1, w2, b2), xs[0], targets[0])
cases["example_grad"] = {"outputs": [enc(g) for g in eg]}

# model ensembling
M = 3
stacked = [torch.stack([input(list(p.shape), 10 * (m + 1) + k) for m in range(M)])
           for k, p in enumerate((w1, b1, w2, b2))]
cases["ensemble"] = {"outputs": [enc(vmap(model, in_dims=(0, None))(tuple(stacked), xs))]}

# neural tangent kernels, by jacobian contraction (the tutorial's first method): the per-sample-
# gradients model on two batches
def fnet_single(params, x):
    return model(params, x.unsqueeze(0)).squeeze(0)


def empirical_ntk_jacobian_contraction(params, x1, x2, compute):
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac1 = [j.flatten(2) for j in jac1]
    jac2 = [j.flatten(2) for j in jac2]
    einsum_expr = {"full": "Naf,Mbf->NMab", "trace": "Naf,Maf->NM", "diagonal": "Naf,Maf->NMa"}[compute]
    return torch.stack([torch.einsum(einsum_expr, j1, j2) for j1, j2 in zip(jac1, jac2)]).sum(0)


x1_ntk, x2_ntk = input([N, IN], 40), input([3, IN], 41)
cases["ntk"] = {"outputs": [enc(empirical_ntk_jacobian_contraction((w1, b1, w2, b2), x1_ntk, x2_ntk, c))
                            for c in ("full", "trace", "diagonal")]}

# jacobians and hessians
D, B = 16, 4
weight, bias, x = input([D, D], 20), input([D], 21), input([D], 22)
xb = input([B, D], 23)


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


cases["jac_rev"] = {"outputs": [enc(jacrev(predict, argnums=2)(weight, bias, x))]}
cases["jac_fwd"] = {"outputs": [enc(jacfwd(predict, argnums=2)(weight, bias, x))]}
cases["jac_rev_wx"] = {"outputs": [enc(j) for j in jacrev(predict, argnums=(0, 2))(weight, bias, x)]}
cases["jac_fwd_wx"] = {"outputs": [enc(j) for j in jacfwd(predict, argnums=(0, 2))(weight, bias, x)]}
cases["batch_jac_rev"] = {"outputs": [enc(vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xb))]}
cases["batch_jac_fwd"] = {"outputs": [enc(vmap(jacfwd(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xb))]}
cases["hess"] = {"outputs": [enc(hessian(predict, argnums=2)(weight, bias, x))]}
cases["batch_hess"] = {"outputs": [enc(vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, xb))]}
ct = input([D], 24)
out, pullback = vjp(predict, weight, bias, x)
cases["predict_vjp"] = {"outputs": [enc(out)] + [enc(g) for g in pullback(ct)]}
tw, tb, tx = input([D, D], 25), input([D], 26), input([D], 27)
out, tangent = jvp(predict, (weight, bias, x), (tw, tb, tx))
cases["predict_jvp"] = {"outputs": [enc(out), enc(tangent)]}
cases["predict_linearize"] = {"outputs": [enc(out), enc(tangent)]}  # linearize's jvp_fn gives jvp's tangent


# Hessian-vector product (forward over reverse), grad_and_value
def energy(x):
    return (x.sin() * x * x).sum()


xe, ve = input([D], 30), input([D], 31)
cases["hvp"] = {"outputs": [enc(t) for t in jvp(grad(energy), (xe,), (ve,))]}
g, v = grad_and_value(energy)(xe)
cases["energy_grad_and_value"] = {"outputs": [enc(g), enc(v)]}


# higher order
def scalar_fn(x):
    return x.tanh() * x * x


x0 = torch.tensor(0.7)
cases["second_derivative"] = {"outputs": [enc(grad(grad(scalar_fn))(x0))]}
cases["third_derivative"] = {"outputs": [enc(grad(grad(grad(scalar_fn)))(x0))]}


# has_aux
def loss_with_aux(w, x):
    pred = x @ w
    return (pred * pred).mean(), pred


wa, xa = input([D, 3], 40), input([5, D], 41)
g, aux = grad(loss_with_aux, has_aux=True)(wa, xa)
cases["loss_grad_aux"] = {"outputs": [enc(g), enc(aux)]}
(g, (v, aux)) = grad_and_value(loss_with_aux, has_aux=True)(wa, xa)
cases["loss_grad_and_value_aux"] = {"outputs": [enc(g), enc(v), enc(aux)]}

# ---- the samples' output, as torch.func computes it
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# Model layers (tests/generator/ad/golden_functions.cpp, LAYER): each f(x, y) as torch computes it,
# and grad of sum(sin(f) * 2) w.r.t. x and y. torch 1.13 has no scaled_dot_product_attention: it is
# written here from its definition (torch >= 2.0's math path).
def sdpa(q, k, v, mask=None, causal=False, scale=None):
    s = q @ k.transpose(-2, -1) * (scale if scale is not None else 1 / math.sqrt(q.shape[-1]))
    if causal:
        s = s.masked_fill(torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).triu(1), -math.inf)
    if mask is not None:
        s = s.masked_fill(~mask, -math.inf) if mask.dtype == torch.bool else s + mask
    return s.softmax(-1) @ v


layers = {
    "layer_norm": ([2, 3, 4], [3, 4], lambda x, y: F.layer_norm(x, [3, 4], y, y * 0.5) + F.layer_norm(x * y, [4])),
    "group_norm": ([2, 4, 3], [4], lambda x, y: F.group_norm(x, 2, y, y.sin()) + F.group_norm(x * 2, 4)),
    "batch_norm": ([3, 2, 4], [2], lambda x, y: F.batch_norm(x, None, None, y, y.cos(), training=True) +
                   F.batch_norm(x, torch.arange(2) * 0.3, torch.arange(2) + 1.0, None, y, training=False)),
    "attention": ([2, 3, 4], [2, 5, 4], lambda x, y: sdpa(x, y, y * 0.5) + sdpa(x, x.sin(), x, causal=True) +
                  sdpa(x, y, y.cos(), torch.arange(5) <= torch.arange(3).unsqueeze(1) + 1, scale=0.7)),
    "embedding": ([5, 3], [2, 3], lambda x, y: F.embedding(torch.arange(4).reshape(2, 2), x) * y +
                  F.embedding(torch.arange(3) * 2, x * 2, padding_idx=2).sum(0) +
                  F.embedding(torch.arange(3), x.cos(), padding_idx=0).sum(0)),
    "var_std": ([3, 4], [3, 4], lambda x, y: torch.var(x * y, 1).unsqueeze(1) + x.var(0, unbiased=False, keepdim=True) +
                (x * y + 1).std((0, 1), unbiased=True, keepdim=True) * x + y.std(unbiased=False)),
    "masks": ([3, 4], [4], lambda x, y: (x * y).masked_fill(torch.arange(3).unsqueeze(1) > torch.arange(4) - 2, 1.5) +
              x.masked_fill(torch.arange(4) > 1, -2) + (x * y).triu(1) + x.tril(-1) * 2),
    "rearrangements": ([2, 3, 4], [3, 4], lambda x, y: x.flip((0, 2)) * y + x.roll((1, -2), (1, 2)) + x.roll(3) +
                       y.repeat(2, 1, 1) + F.one_hot(torch.arange(3), 4) * y),
    "losses": ([3, 4], [3, 4], lambda x, y: F.binary_cross_entropy_with_logits(x, y.sigmoid()) +
               F.binary_cross_entropy_with_logits(x * 2, y.sigmoid(), weight=y.sigmoid(), pos_weight=x.exp(), reduction="none") +
               F.smooth_l1_loss(x * 3, y, reduction="none", beta=0.5) + F.huber_loss(x * 3, y, reduction="none", delta=0.7) +
               F.smooth_l1_loss(x, y) + F.huber_loss(x, y * 2, reduction="sum")),
}
for i, (name, (xs, ys, f)) in enumerate(sorted(layers.items())):
    x, y = input(xs, 40 + 2 * i), input(ys, 41 + 2 * i)
    gx, gy = grad(lambda a, b: (f(a, b).sin() * 2).sum(), argnums=(0, 1))(x, y)
    cases["layer_" + name] = {"outputs": [enc(f(x, y)), enc(gx), enc(gy)]}

def shape(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


lines = ["per-sample gradients: w1 %s, b1 %s, w2 %s, b2 %s" % tuple(shape(g) for g in psg)]
for i, norm in enumerate(cases["per_sample_grads"]["norms"]):
    lines.append("example %d: gradient norm %.8f" % (i, norm))
with open(os.path.join(root, "samples", "per_sample_grads", "expected_output.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")


def matrix(title, m):
    return [title] + ["".join(" %11.8f" % v for v in row) for row in m.tolist()]


d, b = 4, 3
sw, sb, sx, sxs = input([d, d], 20), input([d], 21), input([d], 22), input([b, d], 23)
jr = jacrev(predict, argnums=2)(sw, sb, sx)
jf = jacfwd(predict, argnums=2)(sw, sb, sx)
lines = matrix("jacrev(predict, argnums=2):", jr)
lines.append("jacfwd agrees with jacrev: %s" % ("yes" if torch.allclose(jr, jf, 1e-12, 1e-12) else "no"))
bjr = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(sw, sb, sxs)
bjf = vmap(jacfwd(predict, argnums=2), in_dims=(None, None, 0))(sw, sb, sxs)
lines.append("batched jacobians: %s, jacfwd agrees: %s" % (shape(bjr), "yes" if torch.allclose(bjr, bjf, 1e-12, 1e-12) else "no"))
lines += matrix("jacobian of example 2:", bjr[2])
h = hessian(predict, argnums=2)(sw, sb, sx)
lines.append("hessian: %s" % shape(h))
lines += matrix("hessian of output 0:", h[0])
g, hv = jvp(grad(energy), (sx,), (input([d], 31),))
lines += matrix("grad(energy) and hvp(energy, v) as rows:", torch.stack([g, hv]))
with open(os.path.join(root, "samples", "jacobians_hessians", "expected_output.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")

# samples/per_sample_grads_cnn and samples/neural_tangent_kernels print these (their main.cpp).
def scaled(shape, seed, scale):
    n = math.prod(shape)
    return torch.tensor([math.sin(0.37 * (i + 1) + seed) * scale for i in range(n)]).reshape(shape)


def shape_str(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


cnn = {"conv1.weight": scaled([32, 1, 3, 3], 1, 1 / 3), "conv1.bias": scaled([32], 2, 0.1),
       "conv2.weight": scaled([64, 32, 3, 3], 3, 1 / math.sqrt(288)), "conv2.bias": scaled([64], 4, 0.1),
       "fc1.weight": scaled([128, 9216], 5, 1 / 96), "fc1.bias": scaled([128], 6, 0.1),
       "fc2.weight": scaled([10, 128], 7, 1 / math.sqrt(128)), "fc2.bias": scaled([10], 8, 0.1)}


def simple_cnn(p, x):  # the per-sample-gradients tutorial's SimpleCNN
    x = F.conv2d(x, p["conv1.weight"], p["conv1.bias"]).relu()
    x = F.conv2d(x, p["conv2.weight"], p["conv2.bias"]).relu()
    x = F.max_pool2d(x, 2).flatten(1)
    x = F.linear(x, p["fc1.weight"], p["fc1.bias"]).relu()
    return F.log_softmax(F.linear(x, p["fc2.weight"], p["fc2.bias"]), dim=1)


def cnn_loss(p, sample, target):
    return F.nll_loss(simple_cnn(p, sample.unsqueeze(0)), target.unsqueeze(0))


cnn_data, cnn_targets = scaled([8, 1, 28, 28], 9, 1.0), torch.tensor([(3 * i + 1) % 10 for i in range(8)])
cnn_grads = vmap(grad(cnn_loss), in_dims=(None, 0, 0))(cnn, cnn_data, cnn_targets)
lines = ["per-sample gradients: conv1.weight %s, conv2.weight %s, fc1.weight %s, fc2.bias %s" %
         (shape_str(cnn_grads["conv1.weight"]), shape_str(cnn_grads["conv2.weight"]),
          shape_str(cnn_grads["fc1.weight"]), shape_str(cnn_grads["fc2.bias"]))]
same = True
for i in range(8):
    row = torch.cat([cnn_grads[k][i].flatten() for k in cnn])
    one = grad(cnn_loss)(cnn, cnn_data[i], cnn_targets[i])
    same &= torch.allclose(row, torch.cat([one[k].flatten() for k in cnn]), 1e-10, 1e-10)
    lines.append("example %d: gradient norm %.8f" % (i, row.norm()))
lines.append("the same as the loop of single-example gradients: %s" % ("yes" if same else "no"))
with open(os.path.join(root, "samples", "per_sample_grads_cnn", "expected_output.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")

ntk_p = {"conv1.weight": scaled([32, 3, 3, 3], 1, 1 / math.sqrt(27)), "conv1.bias": scaled([32], 2, 0.1),
         "conv2.weight": scaled([32, 32, 3, 3], 3, 1 / math.sqrt(288)), "conv2.bias": scaled([32], 4, 0.1),
         "conv3.weight": scaled([32, 32, 3, 3], 5, 1 / math.sqrt(288)), "conv3.bias": scaled([32], 6, 0.1),
         "fc.weight": scaled([10, 1152], 7, 1 / math.sqrt(1152)), "fc.bias": scaled([10], 8, 0.1)}


def fnet_single(p, x):  # the neural-tangent-kernel tutorial's CNN on one image
    h = F.conv2d(x.unsqueeze(0), p["conv1.weight"], p["conv1.bias"]).relu()
    h = F.conv2d(h, p["conv2.weight"], p["conv2.bias"]).relu()
    h = F.conv2d(h, p["conv3.weight"], p["conv3.bias"]).flatten(1)
    return F.linear(h, p["fc.weight"], p["fc.bias"]).squeeze(0)


def empirical_ntk_jacobian_contraction(p, x1, x2, equation):
    jac1 = vmap(jacrev(fnet_single), (None, 0))(p, x1)
    jac2 = vmap(jacrev(fnet_single), (None, 0))(p, x2)
    return sum(torch.einsum(equation, jac1[k].flatten(2), jac2[k].flatten(2)) for k in p)


def empirical_ntk_ntk_vps(p, x1, x2):  # the tutorial's implicit method
    def get_ntk(a, b):
        out, vjp_fn = vjp(lambda q: fnet_single(q, a), p)

        def get_ntk_slice(vec):
            return jvp(lambda q: fnet_single(q, b), (p,), vjp_fn(vec))[1]
        return vmap(get_ntk_slice)(torch.eye(out.numel()))
    return vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)


x_train, x_test = scaled([4, 3, 12, 12], 9, 1.0), scaled([2, 3, 12, 12], 10, 1.0)
full = empirical_ntk_jacobian_contraction(ntk_p, x_test, x_train, "Naf,Mbf->NMab")
trace = empirical_ntk_jacobian_contraction(ntk_p, x_test, x_train, "Naf,Maf->NM")
jfc = vmap(jacrev(fnet_single), (None, 0))(ntk_p, x_test)["fc.weight"]
lines = ["jacobian of fc.weight for the test images: %s" % shape_str(jfc),
         "ntk (trace) of the test images against the training images:"]
lines += ["".join(" %12.6f" % v for v in row) for row in trace.tolist()]
lines.append("full ntk [%d, %d, 10, 10]; block (test 1, train 2), outputs 0..3:" % (full.shape[0], full.shape[1]))
lines += ["".join(" %12.6f" % v for v in row[:4]) for row in full[1][2][:4].tolist()]
lines.append("the trace kernel is the full kernel's trace: %s" %
             ("yes" if torch.allclose(full.diagonal(0, 2, 3).sum(-1), trace, 1e-10, 1e-10) else "no"))
lines.append("the implicit method (jvps of vjps) agrees with the jacobian contraction: %s" %
             ("yes" if torch.allclose(empirical_ntk_ntk_vps(ntk_p, x_test, x_train), full, 1e-9, 1e-9) else "no"))
with open(os.path.join(root, "samples", "neural_tangent_kernels", "expected_output.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")

print(json.dumps({"generator": "torch " + torch.__version__ + " (functorch transforms)", "cases": cases},
                 separators=(",", ":")))
