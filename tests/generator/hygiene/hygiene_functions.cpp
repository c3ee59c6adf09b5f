// Functions whose users' names are of every form that generated names are derived from or could
// be taken for (`_`, leading and trailing underscores, digits after an underscore, names that the
// transforms give their own variables: d_x, x_b, out, t1, batch0, x_tangent), each beside the
// same function with plain names: the generated code of both must compile and agree
// (test_hygiene.cpp).
#include <funcgen/funcgen.h>

#include <vector>

#include "hygiene.h"

namespace hy {

FUNCGEN("odd_psg = vmap(grad(odd, argnums=1), in_dims=(None, 0))")
FUNCGEN("odd_jvp = jvp(odd)")
FUNCGEN("odd_linearize = linearize(odd)")
FUNCGEN("odd_jacrev = jacrev(odd, argnums=(0, 1))")
FUNCGEN("odd_jacfwd = vmap(jacfwd(odd, argnums=1), in_dims=(None, 0))")
FUNCGEN("odd_hessian = hessian(odd, argnums=1)")
FUNCGEN("odd_chunked = vmap(odd, in_dims=(None, 0), chunk_size=2)")
fg::Tensor odd(const fg::Tensor& w_, const fg::Tensor& _x) {
  fg::Tensor _ = _x * w_;
  _ = _.sin() * _x;
  fg::Tensor _1 = _ * _;
  fg::Tensor d_x = _1.exp() + _;
  d_x = d_x * w_;
  fg::Tensor x_b = d_x * w_;
  fg::Tensor e1 = x_b.tanh();
  fg::Tensor out = e1 * _;
  fg::Tensor d_out = out + x_b;
  fg::Tensor t = d_out * 0.5;
  fg::Tensor t1 = t.cos();
  fg::Tensor batch0 = t1 * _1;
  fg::Tensor _X = batch0.sigmoid() + 1.0;
  fg::Tensor x_tangent = _X.log();
  fg::Tensor v = x_tangent * w_;
  return v.sum();
}

FUNCGEN("plain_psg = vmap(grad(plain, argnums=1), in_dims=(None, 0))")
FUNCGEN("plain_jvp = jvp(plain)")
FUNCGEN("plain_linearize = linearize(plain)")
FUNCGEN("plain_jacrev = jacrev(plain, argnums=(0, 1))")
FUNCGEN("plain_jacfwd = vmap(jacfwd(plain, argnums=1), in_dims=(None, 0))")
FUNCGEN("plain_hessian = hessian(plain, argnums=1)")
FUNCGEN("plain_chunked = vmap(plain, in_dims=(None, 0), chunk_size=2)")
fg::Tensor plain(const fg::Tensor& w, const fg::Tensor& x) {
  fg::Tensor a = x * w;
  a = a.sin() * x;
  fg::Tensor b = a * a;
  fg::Tensor c = b.exp() + a;
  c = c * w;
  fg::Tensor d = c * w;
  fg::Tensor e = d.tanh();
  fg::Tensor f = e * a;
  fg::Tensor g = f + d;
  fg::Tensor h = g * 0.5;
  fg::Tensor i = h.cos();
  fg::Tensor j = i * b;
  fg::Tensor k = j.sigmoid() + 1.0;
  fg::Tensor l = k.log();
  fg::Tensor m = l * w;
  return m.sum();
}

// `_` as a structure, a field (hygiene.h), a lambda's parameter, a loop counter and a list.
FUNCGEN("odd_structured_psg = vmap(grad(odd_structured), in_dims=(None, 0))")
FUNCGEN("odd_structured_jvp = jvp(odd_structured)")
fg::Tensor odd_structured(const P& _, const fg::Tensor& x) {
  auto f = [&](const fg::Tensor& _1) { return _1 * _._; };
  fg::Tensor _2 = f(x) + _.w_;
  std::vector<fg::Tensor> _v;
  for (int _i = 0; _i < 3; ++_i) {
    _2 = _2.sin() * _._;
    _v.push_back(_2);
  }
  return fg::stack(_v).sum() + _2.sum();
}

FUNCGEN("plain_structured_psg = vmap(grad(plain_structured), in_dims=(None, 0))")
FUNCGEN("plain_structured_jvp = jvp(plain_structured)")
fg::Tensor plain_structured(const P& p, const fg::Tensor& x) {
  auto f = [&](const fg::Tensor& y) { return y * p._; };
  fg::Tensor h = f(x) + p.w_;
  std::vector<fg::Tensor> hs;
  for (int i = 0; i < 3; ++i) {
    h = h.sin() * p._;
    hs.push_back(h);
  }
  return fg::stack(hs).sum() + h.sum();
}

}  // namespace hy

// Specs named like fg ops, and a function calling one under vmap (it runs per example): generated
// code calls functions from the global namespace (::relu), so that argument-dependent lookup on
// fg::Tensor adds no fg op of the same name to the call.
FUNCGEN("relu = grad(squares)")
FUNCGEN("ge = vmap(squares)")
fg::Tensor squares(const fg::Tensor& x) { return (x * x).sum(); }
fg::Tensor relu(const fg::Tensor& x);  // the generated one, declared to be called below

FUNCGEN("calls_relu = vmap(calls)")
fg::Tensor calls(const fg::Tensor& x) { return ::relu(x) * x; }  // NOLINT(funcgen-vmap-fallback)
