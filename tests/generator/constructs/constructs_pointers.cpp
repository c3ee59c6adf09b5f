// Constructs of C++ with pointers and side effects inside expressions, in the form of
// constructs_functions.cpp (one tensor 3x4 in, a scalar out, the 9 specs each), which
// test_constructs.cpp runs through every transform against finite differences in float64 and the
// loop of unbatched calls.
#include <funcgen/funcgen.h>

#include <cstdint>

namespace cs {

// ---- helpers that take a pointer to a tensor: called with the address of a local (&y), or with a
// pointer that points at one for its whole life; *p and p-> are that local, written or read; a
// pointer passed on to another helper's pointer parameter; a const pointer only read; a local that
// no transform batches, passed to the helper as written; a pointer that a helper points at another
// variable (through a reference to it), in the block that declares it
static void scale_through(fg::Tensor* p, double s) { *p = *p * s; }
static void bump_through(fg::Tensor* p, const fg::Tensor* by) {
  scale_through(p, 0.5);
  *p = *p + by->sin() * p->cos();
}
static fg::Tensor read_through(const fg::Tensor* p, int64_t k) { return *p * double(k) + p->exp(); }
static void point_at(const fg::Tensor*& p, const fg::Tensor& q) { p = &q; }

FUNCGEN("pointer_params_grad = grad(pointer_params)")
FUNCGEN("pointer_params_jvp = jvp(pointer_params)")
FUNCGEN("pointer_params_jacfwd = jacfwd(pointer_params)")
FUNCGEN("pointer_params_hessian = hessian(pointer_params)")
FUNCGEN("pointer_params_jacrev2 = jacrev(jacrev(pointer_params))")
FUNCGEN("pointer_params_hvp = jvp(grad(pointer_params))")
FUNCGEN("pointer_params_vmap = vmap(pointer_params)")
FUNCGEN("pointer_params_psg = vmap(grad(pointer_params))")
FUNCGEN("pointer_params_vjacrev = vmap(jacrev(pointer_params))")
fg::Tensor pointer_params(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  scale_through(&y, 3.0);
  fg::Tensor z = x * 0.5;
  fg::Tensor* pz = &z;
  for (int64_t i = 0; i < 2; ++i) bump_through(pz, &y);
  const fg::Tensor r = read_through(&x, y.size(0)) * read_through(pz, 2);
  fg::Tensor w = fg::full({4}, 1.5, fg::kDouble);  // the same in every example: the helper as written
  scale_through(&w, 2.0);
  const fg::Tensor* at = &x;  // x up to the call, z after it
  const fg::Tensor before = *at * 2.0;
  point_at(at, z);
  return (y * z).sum() + r.sum() + (x * w).sum() + read_through(&w, 1).sum() + (*at * before).sum();
}

// ---- assignments of tensors on the lazy side of &&, || and ?:, and before a comma in a loop's
// condition: each runs where C++ evaluates it (both sides of each are taken across the trips)
FUNCGEN("lazy_assignments_grad = grad(lazy_assignments)")
FUNCGEN("lazy_assignments_jvp = jvp(lazy_assignments)")
FUNCGEN("lazy_assignments_jacfwd = jacfwd(lazy_assignments)")
FUNCGEN("lazy_assignments_hessian = hessian(lazy_assignments)")
FUNCGEN("lazy_assignments_jacrev2 = jacrev(jacrev(lazy_assignments))")
FUNCGEN("lazy_assignments_hvp = jvp(grad(lazy_assignments))")
FUNCGEN("lazy_assignments_vmap = vmap(lazy_assignments)")
FUNCGEN("lazy_assignments_psg = vmap(grad(lazy_assignments))")
FUNCGEN("lazy_assignments_vjacrev = vmap(jacrev(lazy_assignments))")
fg::Tensor lazy_assignments(const fg::Tensor& x) {
  fg::Tensor y = x;
  fg::Tensor acc = x * 0.0;
  for (int64_t i = 0; i < 3; ++i) {
    const bool a = i != 1;
    bool b = a && ((y = y * 2), true);
    bool c = a || ((y = y.sin()), false);
    fg::Tensor z = a ? (y = y.sin()) : (y = y * 3);
    acc = acc + z * (b ? 1.0 : 2.0) + (c ? y : x);
    i % 2 == 0 ? (y = y + x) : (acc = acc * 0.5);
  }
  fg::Tensor r = x;
  int k = 0;
  while ((r = r * 0.5 + x.cos()), ++k < 4) {
    if (k == 2) continue;
    r = r * x;
  }
  for (int64_t j = 0; (acc = acc.tanh()), j < 2; ++j) acc = acc + r;
  if (k > 2 && ((y = y * x), true)) acc = acc + y;
  return (y * acc).sum() + r.sum();
}

// ---- compound assignments of tensors (in-place ops) on the lazy side of &&, || and ?: (`a && (b += x)`)
FUNCGEN("lazy_compound_grad = grad(lazy_compound)")
FUNCGEN("lazy_compound_jvp = jvp(lazy_compound)")
FUNCGEN("lazy_compound_jacfwd = jacfwd(lazy_compound)")
FUNCGEN("lazy_compound_hessian = hessian(lazy_compound)")
FUNCGEN("lazy_compound_jacrev2 = jacrev(jacrev(lazy_compound))")
FUNCGEN("lazy_compound_hvp = jvp(grad(lazy_compound))")
FUNCGEN("lazy_compound_vmap = vmap(lazy_compound)")
FUNCGEN("lazy_compound_psg = vmap(grad(lazy_compound))")
FUNCGEN("lazy_compound_vjacrev = vmap(jacrev(lazy_compound))")
fg::Tensor lazy_compound(const fg::Tensor& x) {
  fg::Tensor b = x.sin();
  const bool two = x.dim() == 2;
  const bool taken = two && (b += x * 0.5, true);
  const bool kept = !taken || (b *= x.cos(), true);
  const bool grew = kept && (b -= x.tanh(), b.dim() > 1);
  fg::Tensor c = grew ? (b /= 2.0) : b;
  return (b * c + x).sum();
}

}  // namespace cs
