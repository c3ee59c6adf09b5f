#!/usr/bin/env python3
"""Computes with torch.func (functorch on Debian's python3-torch) the values that
tests/generator/ad/test_golden.cpp checks funcgen's generated code against.

Run: /usr/bin/python3 tests/golden/make_golden.py > tests/golden/torch_func_golden.json
Inputs are deterministic (input() below; the C++ side builds the same ones), float64."""
import json
import math

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

print(json.dumps({"generator": "torch " + torch.__version__ + " (functorch transforms)", "cases": cases},
                 separators=(",", ":")))
