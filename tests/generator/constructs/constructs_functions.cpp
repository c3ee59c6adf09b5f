// The constructs of C++ that users write, each in a function of one tensor (3x4) that returns a
// scalar, so that every transform applies: test_constructs.cpp runs grad, jvp, jacfwd, hessian,
// jacrev(jacrev), jvp(grad), vmap and vmap(grad) of each and checks them against finite
// differences in float64 of the function itself and the loop-of-unbatched definition of vmap.
// Specs are spelled out per function: a construct that stays unsupported would fail the build.
#include <funcgen/funcgen.h>

#include <array>
#include <iterator>
#include <tuple>
#include <utility>
#include <vector>

#include "constructs_helpers.h"

namespace cs {

// ---- break, continue and return inside loops
FUNCGEN("loop_break_grad = grad(loop_break)")
FUNCGEN("loop_break_jvp = jvp(loop_break)")
FUNCGEN("loop_break_jacfwd = jacfwd(loop_break)")
FUNCGEN("loop_break_hessian = hessian(loop_break)")
FUNCGEN("loop_break_jacrev2 = jacrev(jacrev(loop_break))")
FUNCGEN("loop_break_hvp = jvp(grad(loop_break))")
FUNCGEN("loop_break_vmap = vmap(loop_break)")
FUNCGEN("loop_break_psg = vmap(grad(loop_break))")
FUNCGEN("loop_break_vjacrev = vmap(jacrev(loop_break))")
fg::Tensor loop_break(const fg::Tensor& x) {
  fg::Tensor y = x;
  for (int i = 0; i < 10; ++i) {
    if (i == 3) break;
    y = y.sin() * 1.5;
  }
  return y.sum();
}

FUNCGEN("loop_continue_grad = grad(loop_continue)")
FUNCGEN("loop_continue_jvp = jvp(loop_continue)")
FUNCGEN("loop_continue_jacfwd = jacfwd(loop_continue)")
FUNCGEN("loop_continue_hessian = hessian(loop_continue)")
FUNCGEN("loop_continue_jacrev2 = jacrev(jacrev(loop_continue))")
FUNCGEN("loop_continue_hvp = jvp(grad(loop_continue))")
FUNCGEN("loop_continue_vmap = vmap(loop_continue)")
FUNCGEN("loop_continue_psg = vmap(grad(loop_continue))")
FUNCGEN("loop_continue_vjacrev = vmap(jacrev(loop_continue))")
fg::Tensor loop_continue(const fg::Tensor& x) {
  fg::Tensor y = x;
  for (int i = 0; i < 5; ++i) {
    if (i % 2 == 1) continue;
    y = y * 0.5 + y.tanh();
  }
  return (y * y).sum();
}

// The loop runs until a value says it is done: a return from inside it, under an if.
FUNCGEN("loop_return_grad = grad(loop_return)")
FUNCGEN("loop_return_jvp = jvp(loop_return)")
FUNCGEN("loop_return_jacfwd = jacfwd(loop_return)")
FUNCGEN("loop_return_hessian = hessian(loop_return)")
FUNCGEN("loop_return_jacrev2 = jacrev(jacrev(loop_return))")
FUNCGEN("loop_return_hvp = jvp(grad(loop_return))")
FUNCGEN("loop_return_vmap = vmap(loop_return)")
FUNCGEN("loop_return_psg = vmap(grad(loop_return))")
FUNCGEN("loop_return_vjacrev = vmap(jacrev(loop_return))")
fg::Tensor loop_return(const fg::Tensor& x) {
  fg::Tensor y = x;
  for (int i = 0; i < 8; ++i) {
    y = y.cos() + x;
    if (i == 2) return (y * x).sum();
  }
  return y.sum();
}

// A switch inside a loop: a case that continues, a default in the middle that returns or breaks
// out of the switch only, a case that falls through into the next, a braced case with a loop of
// its own.
FUNCGEN("switch_jumps_grad = grad(switch_jumps)")
FUNCGEN("switch_jumps_jvp = jvp(switch_jumps)")
FUNCGEN("switch_jumps_jacfwd = jacfwd(switch_jumps)")
FUNCGEN("switch_jumps_hessian = hessian(switch_jumps)")
FUNCGEN("switch_jumps_jacrev2 = jacrev(jacrev(switch_jumps))")
FUNCGEN("switch_jumps_hvp = jvp(grad(switch_jumps))")
FUNCGEN("switch_jumps_vmap = vmap(switch_jumps)")
FUNCGEN("switch_jumps_psg = vmap(grad(switch_jumps))")
FUNCGEN("switch_jumps_vjacrev = vmap(jacrev(switch_jumps))")
fg::Tensor switch_jumps(const fg::Tensor& x) {
  fg::Tensor y = x;
  for (int i = 0; i < 9; ++i) {
    switch (i % 4) {
      case 0:
        y = y * 0.9;
        continue;
      default:  // i % 4 == 3, before the cases it does not fall into
        if (i == 7) return (y * y * x).sum();
        y = y.tanh();
        break;
      case 1:
        y = y.sin() + x;  // falls through
      case 2: {
        for (int k = 0; k < 3; ++k) {
          if (k == 2) break;  // the inner loop's
          y = y + 0.1 * y.cos();
        }
        break;
      }
    }
    y = y + 0.05 * x;
  }
  return y.sum();
}

// `?:` choosing between tensors: a declaration's value, nested, inside a larger expression, behind
// `&&` and `||`, and in a loop's condition.
FUNCGEN("choices_grad = grad(choices)")
FUNCGEN("choices_jvp = jvp(choices)")
FUNCGEN("choices_jacfwd = jacfwd(choices)")
FUNCGEN("choices_hessian = hessian(choices)")
FUNCGEN("choices_jacrev2 = jacrev(jacrev(choices))")
FUNCGEN("choices_hvp = jvp(grad(choices))")
FUNCGEN("choices_vmap = vmap(choices)")
FUNCGEN("choices_psg = vmap(grad(choices))")
FUNCGEN("choices_vjacrev = vmap(jacrev(choices))")
fg::Tensor choices(const fg::Tensor& x) {
  fg::Tensor y = x;
  for (int i = 0; i < 4; ++i) {
    const fg::Tensor step = i % 2 == 0 ? y.sin() : y * 0.5;
    y = y + (i == 3 ? step.tanh() : i == 1 ? step * step : step) * 0.5;
  }
  const int64_t n = x.size(0);
  fg::Tensor z = y * 0.5;
  if (n > 1 && (n > 2 ? z.t() : z).size(0) == 4) z = z * 1.5;  // chosen only where n > 1
  if (n < 1 || (n > 5 ? z : z.t()).size(1) == 3) z = z.cos();
  for (int i = 0; (i % 2 == 0 ? z : z.t()).size(0) > 0 && i < 3; ++i) z = z * 0.9 + y * 0.1;
  return (n > 2 ? y * x : y).sum() + (n > 5 ? y : x * y.cos()).sum() + (z * x).sum();  // both sides of a shape test
}

// A while loop left by a break, with a continue, nested in a for loop that returns.
FUNCGEN("nested_jumps_grad = grad(nested_jumps)")
FUNCGEN("nested_jumps_jvp = jvp(nested_jumps)")
FUNCGEN("nested_jumps_jacfwd = jacfwd(nested_jumps)")
FUNCGEN("nested_jumps_hessian = hessian(nested_jumps)")
FUNCGEN("nested_jumps_jacrev2 = jacrev(jacrev(nested_jumps))")
FUNCGEN("nested_jumps_hvp = jvp(grad(nested_jumps))")
FUNCGEN("nested_jumps_vmap = vmap(nested_jumps)")
FUNCGEN("nested_jumps_psg = vmap(grad(nested_jumps))")
FUNCGEN("nested_jumps_vjacrev = vmap(jacrev(nested_jumps))")
fg::Tensor nested_jumps(const fg::Tensor& x) {
  fg::Tensor acc = x * 0.1;
  for (int i = 0; i < 4; ++i) {
    int k = 0;
    while (true) {
      ++k;
      if (k == 2) continue;
      acc = acc + (acc * x).sin();
      if (k >= 3) break;
    }
    if (i == 2) return acc.pow(2).sum();
  }
  return acc.sum();
}

// A helper whose loop returns early and breaks, inlined twice (its locals renamed the second time).
static fg::Tensor settle(const fg::Tensor& x, int stop) {
  fg::Tensor y = x;
  for (int i = 0; i < 10; ++i) {
    if (i == stop) return y.sin();
    y = y * 0.9 + x.cos();
    if (i > 3) break;
  }
  return y;
}

FUNCGEN("helper_jumps_grad = grad(helper_jumps)")
FUNCGEN("helper_jumps_jvp = jvp(helper_jumps)")
FUNCGEN("helper_jumps_jacfwd = jacfwd(helper_jumps)")
FUNCGEN("helper_jumps_hessian = hessian(helper_jumps)")
FUNCGEN("helper_jumps_jacrev2 = jacrev(jacrev(helper_jumps))")
FUNCGEN("helper_jumps_hvp = jvp(grad(helper_jumps))")
FUNCGEN("helper_jumps_vmap = vmap(helper_jumps)")
FUNCGEN("helper_jumps_psg = vmap(grad(helper_jumps))")
FUNCGEN("helper_jumps_vjacrev = vmap(jacrev(helper_jumps))")
fg::Tensor helper_jumps(const fg::Tensor& x) { return (settle(x, 2) * settle(x * 0.5, 7)).sum(); }

// The last trip's value, assigned to a tensor declared without one.
FUNCGEN("last_trip_grad = grad(last_trip)")
FUNCGEN("last_trip_jvp = jvp(last_trip)")
FUNCGEN("last_trip_jacfwd = jacfwd(last_trip)")
FUNCGEN("last_trip_hessian = hessian(last_trip)")
FUNCGEN("last_trip_jacrev2 = jacrev(jacrev(last_trip))")
FUNCGEN("last_trip_hvp = jvp(grad(last_trip))")
FUNCGEN("last_trip_vmap = vmap(last_trip)")
FUNCGEN("last_trip_psg = vmap(grad(last_trip))")
FUNCGEN("last_trip_vjacrev = vmap(jacrev(last_trip))")
fg::Tensor last_trip(const fg::Tensor& x) {
  fg::Tensor y;
  for (int i = 1; i < 4; ++i) y = (x * static_cast<double>(i)).sin();
  return y.sum();
}

// ---- helpers defined in a header (constructs_helpers.h)
FUNCGEN("header_helpers_grad = grad(header_helpers)")
FUNCGEN("header_helpers_jvp = jvp(header_helpers)")
FUNCGEN("header_helpers_jacfwd = jacfwd(header_helpers)")
FUNCGEN("header_helpers_hessian = hessian(header_helpers)")
FUNCGEN("header_helpers_jacrev2 = jacrev(jacrev(header_helpers))")
FUNCGEN("header_helpers_hvp = jvp(grad(header_helpers))")
FUNCGEN("header_helpers_vmap = vmap(header_helpers)")
FUNCGEN("header_helpers_psg = vmap(grad(header_helpers))")
FUNCGEN("header_helpers_vjacrev = vmap(jacrev(header_helpers))")
fg::Tensor header_helpers(const fg::Tensor& x) {
  return (layers::smooth(x) + layers::power<3>(x) * 0.1 + layers::Ops::softsign(x)).sum();
}

// ---- range-based for loops: over a tensor's rows and columns, over braced lists of numbers and of
// tensors (unrolled), over a container of numbers at namespace scope
const std::vector<double> kWeights{0.25, -0.5, 1.5};

FUNCGEN("range_for_grad = grad(range_for)")
FUNCGEN("range_for_jvp = jvp(range_for)")
FUNCGEN("range_for_jacfwd = jacfwd(range_for)")
FUNCGEN("range_for_hessian = hessian(range_for)")
FUNCGEN("range_for_jacrev2 = jacrev(jacrev(range_for))")
FUNCGEN("range_for_hvp = jvp(grad(range_for))")
FUNCGEN("range_for_vmap = vmap(range_for)")
FUNCGEN("range_for_psg = vmap(grad(range_for))")
FUNCGEN("range_for_vjacrev = vmap(jacrev(range_for))")
fg::Tensor range_for(const fg::Tensor& x) {
  fg::Tensor s = (x * 0.0).sum();
  for (auto row : x.unbind(0)) s = s + row.sin().sum() * s.cos();
  for (const auto& col : fg::unbind(x, 1)) s = s * 0.5 + col.pow(2).mean();
  for (double w : {0.5, 2.0}) s = s + (x * w).tanh().sum();
  for (double w : kWeights) s = s + (x.exp() * w).mean();
  for (const fg::Tensor& t : {x, x.cos()}) s = s + (t * t).sum() * 0.1;
  fg::Tensor b = x * 2.0;
  for (const fg::Tensor& w : {x, b}) b = b + w.sin();  // the list is made before the first trip
  return s + b.sum();
}

// ---- lambdas in the body: without captures, capturing a tensor and a number by reference, generic
FUNCGEN("lambdas_grad = grad(lambdas)")
FUNCGEN("lambdas_jvp = jvp(lambdas)")
FUNCGEN("lambdas_jacfwd = jacfwd(lambdas)")
FUNCGEN("lambdas_hessian = hessian(lambdas)")
FUNCGEN("lambdas_jacrev2 = jacrev(jacrev(lambdas))")
FUNCGEN("lambdas_hvp = jvp(grad(lambdas))")
FUNCGEN("lambdas_vmap = vmap(lambdas)")
FUNCGEN("lambdas_psg = vmap(grad(lambdas))")
FUNCGEN("lambdas_vjacrev = vmap(jacrev(lambdas))")
fg::Tensor lambdas(const fg::Tensor& x) {
  const fg::Tensor w = x.cos();
  const double k = 0.5;
  auto square = [](const fg::Tensor& t) { return t * t; };
  auto layer = [&](const fg::Tensor& h) { return (h * w + k).tanh(); };
  auto twice = [](const auto& t) { return t + t; };
  fg::Tensor h = layer(square(x));
  h = layer(h);
  return twice(h).sum();
}

// ---- integers computed from shapes: loop trip counts and branches (vmap(jacrev) included); a
// constant written as rows
FUNCGEN("shape_ints_grad = grad(shape_ints)")
FUNCGEN("shape_ints_jvp = jvp(shape_ints)")
FUNCGEN("shape_ints_jacfwd = jacfwd(shape_ints)")
FUNCGEN("shape_ints_hessian = hessian(shape_ints)")
FUNCGEN("shape_ints_jacrev2 = jacrev(jacrev(shape_ints))")
FUNCGEN("shape_ints_hvp = jvp(grad(shape_ints))")
FUNCGEN("shape_ints_vmap = vmap(shape_ints)")
FUNCGEN("shape_ints_psg = vmap(grad(shape_ints))")
FUNCGEN("shape_ints_vjacrev = vmap(jacrev(shape_ints))")
fg::Tensor shape_ints(const fg::Tensor& x) {
  const int64_t rows = x.size(0), cols = x.size(-1);
  fg::Tensor y = x;
  for (int64_t i = 0; i < rows; ++i) y = y.sin() + x * static_cast<double>(i);
  if (cols > 2) y = y * 0.5;
  y = y * fg::tensor({{1.0, 2.0, 0.5, -1.0}}, x.options());  // nested braces, as under GCC
  auto n = x.numel();
  return y.sum() / static_cast<double>(n);
}

// ---- a tensor at namespace scope read (a constant of every transform), structured bindings,
// std::tie (with std::ignore), const references, auto, a ternary on a shape
const fg::Tensor kShift = fg::tensor({0.5, -0.25, 1.0, 2.0}, fg::kDouble);

static std::tuple<fg::Tensor, fg::Tensor> halves(const fg::Tensor& x) { return std::make_tuple(x.sin(), x.cos()); }

FUNCGEN("bindings_grad = grad(bindings)")
FUNCGEN("bindings_jvp = jvp(bindings)")
FUNCGEN("bindings_jacfwd = jacfwd(bindings)")
FUNCGEN("bindings_hessian = hessian(bindings)")
FUNCGEN("bindings_jacrev2 = jacrev(jacrev(bindings))")
FUNCGEN("bindings_hvp = jvp(grad(bindings))")
FUNCGEN("bindings_vmap = vmap(bindings)")
FUNCGEN("bindings_psg = vmap(grad(bindings))")
FUNCGEN("bindings_vjacrev = vmap(jacrev(bindings))")
fg::Tensor bindings(const fg::Tensor& x) {
  auto [s, c] = halves(x + kShift);
  fg::Tensor a, b;
  std::tie(a, b) = halves(s * c);
  std::tie(a, std::ignore) = halves(a + b);
  const fg::Tensor& r = a;
  const double k = x.dim() > 1 ? 0.5 : 2.0;
  auto y = (r + b) * k;
  return y.sum();
}

// ---- a vector of tensors filled with push_back in a time loop, indexed, sized, looped over and
// stacked (along 0 and 1), as a recurrent net keeps its outputs
FUNCGEN("pushed_grad = grad(pushed)")
FUNCGEN("pushed_jvp = jvp(pushed)")
FUNCGEN("pushed_jacfwd = jacfwd(pushed)")
FUNCGEN("pushed_hessian = hessian(pushed)")
FUNCGEN("pushed_jacrev2 = jacrev(jacrev(pushed))")
FUNCGEN("pushed_hvp = jvp(grad(pushed))")
FUNCGEN("pushed_vmap = vmap(pushed)")
FUNCGEN("pushed_psg = vmap(grad(pushed))")
FUNCGEN("pushed_vjacrev = vmap(jacrev(pushed))")
fg::Tensor pushed(const fg::Tensor& x) {
  std::vector<fg::Tensor> outputs;
  outputs.reserve(4);
  fg::Tensor h = x.select(0, 0);
  for (int64_t t = 0; t < x.size(0); ++t) {
    h = (h * 0.5 + x.select(0, t)).tanh();
    outputs.push_back(h);
  }
  outputs.emplace_back(h.cos());
  fg::Tensor s = outputs[0].sum() + outputs.back().sum() * static_cast<double>(outputs.size());
  for (const fg::Tensor& o : outputs) s = s + o.pow(2).sum() * 0.1;
  return fg::stack(outputs).sum() + (fg::stack(outputs, 1) * fg::stack(outputs, 1)).mean() + s;
}

// ---- a vector of a tensor's slices (x.unbind(0), fg::unbind(x, 1)): read, sized, looped over
// and stacked again
FUNCGEN("slices_grad = grad(slices)")
FUNCGEN("slices_jvp = jvp(slices)")
FUNCGEN("slices_jacfwd = jacfwd(slices)")
FUNCGEN("slices_hessian = hessian(slices)")
FUNCGEN("slices_jacrev2 = jacrev(jacrev(slices))")
FUNCGEN("slices_hvp = jvp(grad(slices))")
FUNCGEN("slices_vmap = vmap(slices)")
FUNCGEN("slices_psg = vmap(grad(slices))")
FUNCGEN("slices_vjacrev = vmap(jacrev(slices))")
fg::Tensor slices(const fg::Tensor& x) {
  std::vector<fg::Tensor> rows = x.unbind(0);
  const auto cols = fg::unbind(x, 1);
  fg::Tensor s = (rows[0] * rows[1].sin()).sum() + fg::stack(rows, 1).pow(2).sum() + (cols.front() * cols.back()).sum();
  for (const auto& r : rows) s = s + r.cos().sum() * 0.5;
  for (size_t i = 0; i < cols.size(); ++i) s = s * 0.9 + cols[i].tanh().sum();
  return s * static_cast<double>(rows.size());
}

// ---- the pieces of split and chunk (of different sizes: 4 columns in pieces of 3, 3 rows in 2
// chunks, rows in pieces of 1 and 2), stored and read by index, sized and looped over, looped over
// directly, and indexed where they are made (as `q, k, v = qkv.chunk(3, -1)` is ported)
FUNCGEN("pieces_grad = grad(pieces)")
FUNCGEN("pieces_jvp = jvp(pieces)")
FUNCGEN("pieces_jacfwd = jacfwd(pieces)")
FUNCGEN("pieces_hessian = hessian(pieces)")
FUNCGEN("pieces_jacrev2 = jacrev(jacrev(pieces))")
FUNCGEN("pieces_hvp = jvp(grad(pieces))")
FUNCGEN("pieces_vmap = vmap(pieces)")
FUNCGEN("pieces_psg = vmap(grad(pieces))")
FUNCGEN("pieces_vjacrev = vmap(jacrev(pieces))")
fg::Tensor pieces(const fg::Tensor& x) {
  std::vector<fg::Tensor> cols = x.split(3, 1);
  const auto rows = fg::chunk(x, 2);
  fg::Tensor s = (cols[0].sum(1) * cols.back().sin().sum(1)).sum() + (rows.front().sum(0) * rows[1].cos().sum(0)).sum();
  for (const auto& r : rows) s = s + r.tanh().sum() * 0.5;
  for (size_t i = 0; i < cols.size(); ++i) s = s * 0.9 + cols[i].pow(2).mean();
  for (const fg::Tensor& p : x.chunk(4, -1)) s = s + (p * p.exp()).sum() * 0.1;
  const std::vector<fg::Tensor> sized = x.split({1, 2}, 0);  // pieces of given sizes
  s = s + (sized[0].sum() * sized.back().cos().sum()) * static_cast<double>(sized.size());
  for (const auto& p : fg::split(x, {3, 1}, -1)) s = s + p.sin().mean();
  return s * static_cast<double>(cols.size()) + x.chunk(3, 0)[2].sin().sum() + x.split(2, -1).at(1).pow(3).sum();
}

// ---- a vector of tensors built with braces, indexed, sized, stacked and concatenated
FUNCGEN("braced_grad = grad(braced)")
FUNCGEN("braced_jvp = jvp(braced)")
FUNCGEN("braced_jacfwd = jacfwd(braced)")
FUNCGEN("braced_hessian = hessian(braced)")
FUNCGEN("braced_jacrev2 = jacrev(jacrev(braced))")
FUNCGEN("braced_hvp = jvp(grad(braced))")
FUNCGEN("braced_vmap = vmap(braced)")
FUNCGEN("braced_psg = vmap(grad(braced))")
FUNCGEN("braced_vjacrev = vmap(jacrev(braced))")
fg::Tensor braced(const fg::Tensor& x) {
  std::vector<fg::Tensor> v{x.sin(), x.cos(), x * 2.0};
  const fg::Tensor s = v[1] * static_cast<double>(v.size()) + v.back();
  return fg::stack(v, 1).pow(2).sum() + s.sum() + (fg::cat(v) * fg::cat(v, 1).sum()).tanh().sum();
}

// ---- breaks of a switch from inside its cases' ifs and blocks, with fallthrough, in a loop
FUNCGEN("switch_breaks_grad = grad(switch_breaks)")
FUNCGEN("switch_breaks_jvp = jvp(switch_breaks)")
FUNCGEN("switch_breaks_jacfwd = jacfwd(switch_breaks)")
FUNCGEN("switch_breaks_hessian = hessian(switch_breaks)")
FUNCGEN("switch_breaks_jacrev2 = jacrev(jacrev(switch_breaks))")
FUNCGEN("switch_breaks_hvp = jvp(grad(switch_breaks))")
FUNCGEN("switch_breaks_vmap = vmap(switch_breaks)")
FUNCGEN("switch_breaks_psg = vmap(grad(switch_breaks))")
FUNCGEN("switch_breaks_vjacrev = vmap(jacrev(switch_breaks))")
fg::Tensor switch_breaks(const fg::Tensor& x) {
  fg::Tensor y = x;
  for (int k = 0; k < 4; ++k) {
    switch (k) {
      case 0:
        if (x.size(0) > 1) break;
        y = y * 2.0;
        break;
      case 1:
        y = y.sin();
        if (k == 1) {
          y = y + 1.0;
          break;
        }
        y = y * 3.0;
        [[fallthrough]];
      case 2: {
        y = y.cos() * 0.5;
        if (k == 2) break;
        y = y.tanh();
      }
        [[fallthrough]];
      default:
        y = y + x.pow(2) * 0.1;
    }
  }
  return y.sum();
}

// ---- local structures, held leaf by leaf: a recurrent cell that takes and returns its state as a
// struct, a helper that returns a pair read off its call, structured bindings of a struct (by value)
// and of an array (by reference), a std::array local with an element assigned, a field assigned, a
// swap through a braced temporary, a nested struct with a scalar field, a state passed as a braced
// temporary, and a lambda that returns a struct
struct CellState {
  fg::Tensor h, c;
};
struct Carry {
  CellState state;
  fg::Tensor total;
  int64_t steps;
};

static CellState cell_step(const fg::Tensor& x, const CellState& s) {
  fg::Tensor c = s.c * 0.5 + (x * s.h).tanh();
  return CellState{c.sigmoid() * s.h + x, c};
}
static std::pair<fg::Tensor, fg::Tensor> scaled(const fg::Tensor& x, double k) { return {x * k, x.exp() * k}; }
static std::array<fg::Tensor, 2> ends(const fg::Tensor& x) { return {x[0], x[x.size(0) - 1]}; }

FUNCGEN("local_structs_grad = grad(local_structs)")
FUNCGEN("local_structs_jvp = jvp(local_structs)")
FUNCGEN("local_structs_jacfwd = jacfwd(local_structs)")
FUNCGEN("local_structs_hessian = hessian(local_structs)")
FUNCGEN("local_structs_jacrev2 = jacrev(jacrev(local_structs))")
FUNCGEN("local_structs_hvp = jvp(grad(local_structs))")
FUNCGEN("local_structs_vmap = vmap(local_structs)")
FUNCGEN("local_structs_psg = vmap(grad(local_structs))")
FUNCGEN("local_structs_vjacrev = vmap(jacrev(local_structs))")
fg::Tensor local_structs(const fg::Tensor& x) {
  CellState s{x[0], fg::zeros_like(x[0])};
  for (int64_t t = 1; t < x.size(0); ++t) s = cell_step(x[t], s);
  Carry carry{s, s.h.sum(), 1};
  carry.state = cell_step(s.h, CellState{s.c, s.h});
  carry.steps = carry.steps + 1;
  s = CellState{s.c, s.h};  // a swap: both are read before either is assigned
  const fg::Tensor first = scaled(s.h, 2.0).first;
  auto [h, c] = carry.state;
  h = h * 0.5;
  auto [lo, hi] = scaled(h + c, 0.25);
  std::array<fg::Tensor, 2> e = ends(x);
  e[1] = e[1] * lo.sum();
  const auto& [top, bottom] = e;
  auto mix = [](const fg::Tensor& a, const fg::Tensor& b) { return CellState{a + b, a * b}; };
  const CellState m = mix(carry.state.h, carry.state.c);
  return (first * hi).sum() + carry.total * (top * bottom).sum() + s.c.sum() * double(carry.steps) + m.c.sum();
}

// ---- helpers that change what they are passed: in place (seen by every variable that shares the
// memory, and by a view's base), a tensor through a non-const reference, a struct's fields through one
static void scale_in_place(const fg::Tensor& h, double k) { h.mul_(k); }
static void accumulate(fg::Tensor& total, const fg::Tensor& x) { total = total + x.tanh(); }
static void advance(CellState& s, const fg::Tensor& x) {
  s.c = s.c * 0.5 + x;
  s.h = s.c.sin() * s.h;
}

FUNCGEN("out_params_grad = grad(out_params)")
FUNCGEN("out_params_jvp = jvp(out_params)")
FUNCGEN("out_params_jacfwd = jacfwd(out_params)")
FUNCGEN("out_params_hessian = hessian(out_params)")
FUNCGEN("out_params_jacrev2 = jacrev(jacrev(out_params))")
FUNCGEN("out_params_hvp = jvp(grad(out_params))")
FUNCGEN("out_params_vmap = vmap(out_params)")
FUNCGEN("out_params_psg = vmap(grad(out_params))")
FUNCGEN("out_params_vjacrev = vmap(jacrev(out_params))")
fg::Tensor out_params(const fg::Tensor& x) {
  fg::Tensor h = x * 1.5;
  const fg::Tensor alias = h;
  scale_in_place(h, 2.0);
  fg::Tensor total = fg::zeros_like(x[0]);
  for (int64_t i = 0; i < x.size(0); ++i) accumulate(total, x[i] * h[i]);
  CellState s{x[0], x[1]};
  advance(s, total);
  fg::Tensor m = x.cos();
  scale_in_place(m[1], 3.0);
  return (alias * x).sum() + (s.h * s.c).sum() + (m * x).sum();
}

// ---- the same through a second helper: a by-value parameter passed on by reference (the caller's
// variable keeps its value), a reference passed on in a loop and to a struct's helper, a copy of a
// struct taken before it changes, default member initializers, a struct reset to its default, a
// row of a returned pair's tensor, an unbatched tensor a helper makes batched through a reference, a
// struct with a number passed on by reference, fields left out of braces, an output parameter, and a
// write in place through a copy of what a helper is passed (one that returns a number too)
struct Tally {
  fg::Tensor sum;
  int64_t count = 2;
};

static fg::Tensor plus_one(fg::Tensor t) {
  accumulate(t, t);
  return t;
}
static void twice(fg::Tensor& total, const fg::Tensor& x) {
  accumulate(total, x);
  accumulate(total, x * 0.5);
}
struct Moments {
  fg::Tensor w, m;
  int64_t steps;
};
static void step_moments(Moments& o, const fg::Tensor& g) {
  o.m = o.m * 0.9 + g;
  o.w = o.w - o.m * 0.1;
}
static void run_moments(Moments& o, const fg::Tensor& g) { step_moments(o, g); }
static void sin_into(fg::Tensor& y, const fg::Tensor& x) { y = x.sin(); }
static void double_through_copy(const fg::Tensor& h) {
  fg::Tensor y = h;
  y.mul_(2.0);
}
static int64_t double_rows(const fg::Tensor& h) {  // returns a number, and writes through a copy
  fg::Tensor y = h;
  y.mul_(2.0);
  return y.size(0);
}
static bool squash(fg::Tensor& h) {  // returns a number, and assigns its reference parameter
  h = h.tanh();
  return true;
}
static void advance_twice(CellState& s, const fg::Tensor& x) {
  const CellState old = s;
  advance(s, x);
  advance(s, old.c);
}

FUNCGEN("passed_on_grad = grad(passed_on)")
FUNCGEN("passed_on_jvp = jvp(passed_on)")
FUNCGEN("passed_on_jacfwd = jacfwd(passed_on)")
FUNCGEN("passed_on_hessian = hessian(passed_on)")
FUNCGEN("passed_on_jacrev2 = jacrev(jacrev(passed_on))")
FUNCGEN("passed_on_hvp = jvp(grad(passed_on))")
FUNCGEN("passed_on_vmap = vmap(passed_on)")
FUNCGEN("passed_on_psg = vmap(grad(passed_on))")
FUNCGEN("passed_on_vjacrev = vmap(jacrev(passed_on))")
fg::Tensor passed_on(const fg::Tensor& x) {
  fg::Tensor h = x * 2;
  const fg::Tensor once = plus_one(h);
  fg::Tensor total = fg::zeros({x.size(1)}, fg::kDouble);
  for (int64_t i = 0; i < x.size(0); ++i) twice(total, x[i]);
  CellState s{x[0], x[2]};
  advance_twice(s, total);
  Tally tally;
  tally.sum = s.h * 2;
  tally.count++;
  CellState reset = s;
  reset = CellState();
  reset.h = x[1];
  const fg::Tensor row = scaled(x, 2.0).first[1];
  Moments moments{x[0], fg::zeros_like(x[0]), 0};
  run_moments(moments, x[1]);
  CellState partial{x[2]};
  partial.c = x[0];
  fg::Tensor filled;
  sin_into(filled, x[1]);
  fg::Tensor d = x.cos();
  double_through_copy(d);
  fg::Tensor e = x.sin();
  const int64_t rows = double_rows(e);
  fg::Tensor q = x * 0.5;
  const bool squashed = squash(q) && q.dim() == 2;
  return (once * h).sum() + (tally.sum * row).sum() * double(tally.count) + (reset.h * total).sum() +
         (moments.w * partial.h * partial.c).sum() + (filled * d[0]).sum() + (e * x).sum() * double(rows) +
         (q * x).sum() * (squashed ? 1.0 : 2.0);
}

// ---- lambdas passed to helper templates and called there: a fixed number of iterations of a
// step (JAX's fixed-point pattern), a header's map over rows given a lambda written in the call, a
// lambda forwarded and passed on, one capturing a variable named like the helper's parameter, a
// generic lambda without captures, lambdas that return a number or change what they are passed, one
// called by name after a variable it captures by reference was assigned
template <typename Step>
fg::Tensor iterate(Step step, fg::Tensor z, int n) {
  for (int i = 0; i < n; ++i) z = step(z);
  return z;
}
template <typename F>
fg::Tensor forwarded(F&& f, const fg::Tensor& x) {
  return std::forward<F>(f)(x);
}
template <typename F>
fg::Tensor both(const F& f, const fg::Tensor& x) {
  return forwarded(f, x) + iterate(f, x * 0.5, 2);
}
template <typename F>
int64_t count_with(const F& f, const fg::Tensor& x) {  // a number from the lambda
  return f(x) + 1;
}
template <typename F>
fg::Tensor changed_by(const F& f, fg::Tensor z) {  // the lambda changes what it is passed
  f(z);
  return z;
}

FUNCGEN("lambdas_passed_grad = grad(lambdas_passed)")
FUNCGEN("lambdas_passed_jvp = jvp(lambdas_passed)")
FUNCGEN("lambdas_passed_jacfwd = jacfwd(lambdas_passed)")
FUNCGEN("lambdas_passed_hessian = hessian(lambdas_passed)")
FUNCGEN("lambdas_passed_jacrev2 = jacrev(jacrev(lambdas_passed))")
FUNCGEN("lambdas_passed_hvp = jvp(grad(lambdas_passed))")
FUNCGEN("lambdas_passed_vmap = vmap(lambdas_passed)")
FUNCGEN("lambdas_passed_psg = vmap(grad(lambdas_passed))")
FUNCGEN("lambdas_passed_vjacrev = vmap(jacrev(lambdas_passed))")
fg::Tensor lambdas_passed(const fg::Tensor& x) {
  const fg::Tensor w = x[0].cos();
  const double damping = 0.5;
  auto step = [&](const fg::Tensor& z) { return (z * w).tanh() * damping + x[1] * 0.1; };
  const fg::Tensor fixed = iterate(step, x[2], 3);
  fg::Tensor y = fixed.sin();
  const fg::Tensor rows = layers::map_rows([&](const fg::Tensor& r) { return r * y + r.pow(2) * 0.1; }, x);
  auto scale_z = [&](const fg::Tensor& z) { return z * x.sum(); };  // `x` is `both`'s parameter's name too
  const fg::Tensor passed = both(scale_z, x[1]);
  const fg::Tensor plain = forwarded([](const auto& t) { return t.exp() * 0.5; }, x);
  const int64_t counted = count_with([&](const fg::Tensor& t) { return t.size(0) * y.size(0); }, x);
  const fg::Tensor damped = changed_by([&](fg::Tensor& z) { z = z * w; }, x[1]);
  fg::Tensor m = x;
  auto rows_of_m = [&] { return m.size(0); };
  m = m.t();
  const int64_t now = rows_of_m();  // 4: the lambda reads m as it is now
  return (fixed * rows[1]).sum() + rows.sum() + (passed * w).sum() + plain.mean() +
         (damped * x[2]).sum() * double(counted + now);
}

// ---- vectors of tensors of different shapes, pushed to and read back at run-time indices (not
// stacked), as users keep activations: a U-Net's skips read last first, a recurrent net's states
// read back with back() while pushing, a list built in each trip of a loop, a push in a branch, a
// braced list, a value read twice and one never read, a constant pushed beside mapped values,
// range-for, front(), at(), size() and empty(); a helper with a list of its own (a pyramid of
// halvings, its levels read mirrored) and one that reads a list it is passed; a list concatenated
// as it grows (DenseNet); indices in parentheses
inline fg::Tensor pyramid(const fg::Tensor& x) {
  std::vector<fg::Tensor> levels;
  fg::Tensor h = x;
  while (h.size(1) > 1) {
    levels.push_back(h);
    h = h.narrow(1, 0, h.size(1) / 2) + h.narrow(1, h.size(1) / 2, h.size(1) / 2);
  }
  fg::Tensor s = h.sum();
  for (size_t i = 0; i < levels.size(); ++i) s = s + (levels[i] * levels[levels.size() - 1 - i].mean()).sum();
  return s;
}
fg::Tensor sum_of_squares(const std::vector<fg::Tensor>& v) {
  fg::Tensor s = v[0].pow(2).sum();
  for (size_t i = 1; i < v.size(); ++i) s = s + v[i].pow(2).sum();
  return s;
}
FUNCGEN("listed_grad = grad(listed)")
FUNCGEN("listed_jvp = jvp(listed)")
FUNCGEN("listed_jacfwd = jacfwd(listed)")
FUNCGEN("listed_hessian = hessian(listed)")
FUNCGEN("listed_jacrev2 = jacrev(jacrev(listed))")
FUNCGEN("listed_hvp = jvp(grad(listed))")
FUNCGEN("listed_vmap = vmap(listed)")
FUNCGEN("listed_psg = vmap(grad(listed))")
FUNCGEN("listed_vjacrev = vmap(jacrev(listed))")
fg::Tensor listed(const fg::Tensor& x) {
  std::vector<fg::Tensor> skips;
  fg::Tensor h = x;
  for (int64_t level = 0; level < 3; ++level) {
    skips.push_back(h);
    h = (h.narrow(1, 0, h.size(1) - 1) * 0.7).tanh();  // 3x4, 3x3, 3x2, then 3x1
  }
  for (int64_t level = static_cast<int64_t>(skips.size()) - 1; level >= 0; --level)
    h = h + skips[level].sin().sum(1, true) * 0.1;
  std::vector<fg::Tensor> states;
  states.push_back(x[0] * 0.5);
  for (int64_t t = 0; t < x.size(0); ++t) states.push_back((states.back() * 0.8 + x[t]).tanh());
  fg::Tensor total = h.sum() + states.at(1).sum() * states.front().sum();
  for (int64_t t = 0; t < x.size(0); ++t) {
    std::vector<fg::Tensor> parts{x[t].sin(), x[t].sum(0, true)};
    if (t % 2 == 0) parts.push_back(x[t].pow(2));
    parts.push_back(fg::full({x.size(1)}, 2.0, x.options()));  // a constant beside mapped values
    for (const fg::Tensor& p : parts) total = total + (p * parts[0].sum()).sum() * 0.1;
    total = total + parts.back().sum() * static_cast<double>(parts.size());
  }
  std::vector<fg::Tensor> unused{x.exp(), x.cos()};  // the first is read twice, the second never
  if (!unused.empty()) total = total + (unused[0] * unused[0].mean()).sum();
  total = total + pyramid(x) * 0.1 + sum_of_squares(states) * 0.1;
  std::vector<fg::Tensor> kept;  // variables pushed under ifs
  kept.reserve(4);
  fg::Tensor g = x * 0.5;
  for (int64_t i = 0; i < 3; ++i) {
    if (i != 1) kept.push_back(g);
    g = g.sin() * 1.5;
  }
  if (x.size(1) == 4) kept.push_back(std::move(g));
  total = total + (kept[0] * kept.back()).sum() + kept[1].sum();
  std::vector<fg::Tensor> features{x.sin()};  // each layer reads all before it concatenated (DenseNet)
  for (int64_t i = 0; i < 2; ++i) features.push_back((fg::cat(features) * 0.5).tanh().narrow(0, i, 1));
  total = total + (fg::cat(features, -2).cos() * 0.1).sum();
  if (fg::cat(features).size(0) > 4) total = total * 1.5;
  for (int64_t i = 0; i < x.size(0); ++i)  // indices in parentheses, computed from sizes
    total = total + (x[i] * x[(i + 1) % x.size(0)]).sum() * 0.1 + states[(i + 1) % states.size()].sum() * 0.1;
  return total + (states[static_cast<size_t>(x.size(0))] * states[2]).sum();
}

// ---- elements of a vector of tensors assigned (`h[l] = ...`, at(), back(), std::move), as a stacked
// recurrent net keeps one state per layer: a braced vector and one made of copies of a value,
// h(n, value), stacked after its elements were assigned
FUNCGEN("assigned_grad = grad(assigned)")
FUNCGEN("assigned_jvp = jvp(assigned)")
FUNCGEN("assigned_jacfwd = jacfwd(assigned)")
FUNCGEN("assigned_hessian = hessian(assigned)")
FUNCGEN("assigned_jacrev2 = jacrev(jacrev(assigned))")
FUNCGEN("assigned_hvp = jvp(grad(assigned))")
FUNCGEN("assigned_vmap = vmap(assigned)")
FUNCGEN("assigned_psg = vmap(grad(assigned))")
FUNCGEN("assigned_vjacrev = vmap(jacrev(assigned))")
fg::Tensor assigned(const fg::Tensor& x) {
  // a two-layer recurrent net over the rows of x, its layers' states in a vector
  std::vector<fg::Tensor> h{x[0] * 0.1, x[1].sum(0, true) * 0.2};
  std::vector<fg::Tensor> c(2, x[2] * 0.1);  // cells: copies of one value
  fg::Tensor out = x.sum() * 0.0;
  for (int64_t t = 0; t < x.size(0); ++t) {
    fg::Tensor input = x[t];
    for (size_t l = 0; l < h.size(); ++l) {
      h[l] = (h[l] * 0.5 + input.sum() * 0.3).tanh();
      c[l] = c[l] * 0.9 + h[l].sin();
      input = h[l] + c[l] * 0.1;
    }
    out = out + h.back().sum() + h.front().sum() * 0.5;
  }
  h.at(0) = h[0] * 2.0;
  c.back() = c.back() + h.front().sum();
  fg::Tensor moved = c[1] * 0.5;
  c[1] = std::move(moved);
  return out + (h[0] * h[1]).sum() + (c[0] * c.back()).sum() + (fg::stack(c, 1) * fg::stack(c).sum()).sum();
}

// ---- numbers the body changes read by ops (a while loop's counter declared before it, one
// incremented before its read, one in a for body, one assigned after an op read it), and indices
// written without spaces (i<1): the derivative code reads each as it was at the op
FUNCGEN("counters_grad = grad(counters)")
FUNCGEN("counters_jvp = jvp(counters)")
FUNCGEN("counters_jacfwd = jacfwd(counters)")
FUNCGEN("counters_hessian = hessian(counters)")
FUNCGEN("counters_jacrev2 = jacrev(jacrev(counters))")
FUNCGEN("counters_hvp = jvp(grad(counters))")
FUNCGEN("counters_vmap = vmap(counters)")
FUNCGEN("counters_psg = vmap(grad(counters))")
FUNCGEN("counters_vjacrev = vmap(jacrev(counters))")
fg::Tensor counters(const fg::Tensor& x) {
  fg::Tensor h = x[0];
  int64_t k = 0;
  while (k < 2) {
    h = h.tanh() * x[k + 1];
    ++k;
  }
  int64_t j = 0;
  do {
    ++j;
    h = h + x[j].sin() * 0.5;
  } while (j < 2);
  for (int64_t i = 0; i < 3; ++i) {
    int64_t m = i;
    m += 1;
    h = h * x[m % 3].cos() + x[(i<1) + x.size(0) - 3].sum() * 0.1;
  }
  k = 0;
  const fg::Tensor y = x[k] * 2.0;
  k = 2;
  return (h * y).sum() + x[k].sum() + x[(k<<1) % x.size(0)].sum();
}

// ---- has_aux under vmap(jacrev) of a function whose derivative reads a shape int: the composed form
FUNCGEN("shape_aux_vjacrev = vmap(jacrev(shape_aux, has_aux=True))")
std::tuple<fg::Tensor, fg::Tensor> shape_aux(const fg::Tensor& x) {
  const int64_t n = x.size(0);
  fg::Tensor s = x;
  for (int64_t i = 0; i < n; ++i) s = s * 0.5 + x[i].sin();
  return {s, s.sum()};
}

// ---- default arguments stay on the generated functions

FUNCGEN("defaults_grad = grad(defaults)")
FUNCGEN("defaults_vmap = vmap(defaults, in_dims=(0, None, None))")
fg::Tensor defaults(const fg::Tensor& x, double scale = 2.0, int64_t power = 3) { return (x * scale).pow(power).sum(); }


// ---- lambdas that capture structures and other lambdas: a local structure captured by reference,
// by copy and through a reference to a part of it, passed whole to a lambda that takes a
// structure; a lambda that calls another it captures, in the body and passed to a helper; a helper
// whose own lambda calls the lambda it is passed, and passes that on; init-captures
template <typename F, typename G>
fg::Tensor apply_both(F f, G g, const fg::Tensor& z) { return f(g(z)) * 0.5; }
template <typename F>
fg::Tensor doubled(F f, const fg::Tensor& z) {
  auto h = [&](const fg::Tensor& t) { return f(t) * 2; };
  return h(z) + apply_both(h, f, z.sin());
}
FUNCGEN("captures_grad = grad(captures)")
FUNCGEN("captures_jvp = jvp(captures)")
FUNCGEN("captures_jacfwd = jacfwd(captures)")
FUNCGEN("captures_hessian = hessian(captures)")
FUNCGEN("captures_jacrev2 = jacrev(jacrev(captures))")
FUNCGEN("captures_hvp = jvp(grad(captures))")
FUNCGEN("captures_vmap = vmap(captures)")
FUNCGEN("captures_psg = vmap(grad(captures))")
FUNCGEN("captures_vjacrev = vmap(jacrev(captures))")
fg::Tensor captures(const fg::Tensor& x) {
  const Carry carry{CellState{x[0].cos(), x[1] * 0.5}, x[2].sum() * 0.1, 2};
  const CellState& state = carry.state;
  auto cell = [](const CellState& s, const fg::Tensor& z) { return (z * s.h + s.c).tanh(); };
  auto step = [&](const fg::Tensor& z) { return cell(carry.state, z) * carry.total + z * double(carry.steps); };
  auto copied = [state, cell](const fg::Tensor& z) { return cell(state, z.sin()) + state.h; };
  auto by_part = [&state](const fg::Tensor& z) { return z * state.c; };
  auto twice = [&](const fg::Tensor& z) { return copied(step(z)) + by_part(z); };
  fg::Tensor y = twice(x[1]) + doubled(step, x[2]) + doubled(twice, x[0]);
  y = y + doubled([&](const fg::Tensor& z) { return by_part(z).sin() * carry.total; }, x[1]);
  // init-captures (a tensor computed there, a number, a copy of a structure), a lambda of numbers
  // called from another, a lambda defined inside a lambda, one that returns a tuple
  auto scaled = [s = x[2].cos() * 2, k = 0.5, c = carry.state](const fg::Tensor& z) { return (z * s).sin() * k + c.h; };
  const double base = 0.75;
  auto factor = [&] { return base * 2; };
  auto nested = [&](const fg::Tensor& z) {
    auto inner = [&](const fg::Tensor& v) { return (v * state.h).tanh() * factor(); };
    return inner(z) + inner(z * 0.5);
  };
  auto halves = [&](const fg::Tensor& z) { return std::make_tuple(z * 0.5, z.exp() * 0.1); };
  const auto [lo, hi] = halves(nested(x[0]));
  y = y + scaled(y) + doubled([r = x[1].sum()](const fg::Tensor& z) { return z * r; }, lo) + hi;
  y = y + doubled([&](const auto& z) { return (z * state.c).cos(); }, x[2]);  // generic, called with tensors
  const std::vector<double> weights{0.5, 1.5};  // init-captures in the second of two declarations, braced
  fg::Tensor a = x[0].sin(), b = doubled([w = weights[1], k{0.25}](const fg::Tensor& z) { return z * w * k; }, a);
  constexpr int kinds = 2;
  constexpr int count = kinds;  // a copy read only in a type
  const std::array<double, count> mix{0.25, 0.75};
  y = y * mix[0] + y.sin() * mix[1] + b;
  return y.pow(2).sum();
}

// ---- vectors of tensors built at run time by a helper or a lambda and returned to the caller (an
// RNN's states), and one declared with n empty tensors (`h(n)`) and assigned element by element; vmap
// of the helper itself returns the list of its batched elements (below)
FUNCGEN("unrolled_vmap = vmap(unrolled, in_dims=(0, None, None))")
FUNCGEN("unrolled_vmap2 = vmap(vmap(unrolled, in_dims=(0, 0, None)), in_dims=(1, None, None), out_dims=1)")
std::vector<fg::Tensor> unrolled(const fg::Tensor& x0, const fg::Tensor& w, int64_t steps) {
  std::vector<fg::Tensor> states;
  fg::Tensor h = x0;
  for (int64_t t = 0; t < steps; ++t) {
    h = (h * w).tanh();
    states.push_back(h);
  }
  return states;
}

std::vector<fg::Tensor> first_last(const fg::Tensor& row) {
  std::vector<fg::Tensor> out{row.narrow(0, 0, 1), row.narrow(0, row.size(0) - 1, 1)};
  return out;
}

std::vector<fg::Tensor> unrolled_twice(const fg::Tensor& x0, const fg::Tensor& w) { return unrolled(x0, w * 0.3, 2); }

FUNCGEN("built_lists_grad = grad(built_lists)")
FUNCGEN("built_lists_jvp = jvp(built_lists)")
FUNCGEN("built_lists_jacfwd = jacfwd(built_lists)")
FUNCGEN("built_lists_hessian = hessian(built_lists)")
FUNCGEN("built_lists_jacrev2 = jacrev(jacrev(built_lists))")
FUNCGEN("built_lists_hvp = jvp(grad(built_lists))")
FUNCGEN("built_lists_vmap = vmap(built_lists)")
FUNCGEN("built_lists_psg = vmap(grad(built_lists))")
FUNCGEN("built_lists_vjacrev = vmap(jacrev(built_lists))")
fg::Tensor built_lists(const fg::Tensor& x) {
  const std::vector<fg::Tensor> hs = unrolled(x[0], x[1] * 0.5, x.size(0));
  fg::Tensor total = fg::stack(hs).pow(2).sum() + hs.back().sum() * hs[0].sum();
  std::vector<fg::Tensor> rows(x.size(0));
  for (int64_t i = 0; i < x.size(0); ++i) rows[i] = x[i].sin() * static_cast<double>(i + 1);
  rows[1] = rows[1] + rows[0].cos();
  total = total + fg::cat(rows).sum() * 0.3;
  auto pieces = [&](int64_t n) {
    std::vector<fg::Tensor> out;
    for (int64_t k = 0; k < n; ++k) out.push_back(x[k % x.size(0)] * x[2].exp() * 0.1);
    return out;
  };
  for (const fg::Tensor& p : pieces(4)) total = total + (p * p).sum();
  std::vector<fg::Tensor> both = first_last(x[2]);
  total = total + (both[0] * both[1]).sum();
  for (int64_t k = 0; k < 2; ++k) {  // n empty tensors declared in a loop
    std::vector<fg::Tensor> pair(2);
    pair[0] = x[k] * static_cast<double>(k + 1);
    pair[1] = pair[0].sin() * total;
    total = total + pair[1].sum() * 0.1;
  }
  // a helper's list of constants (the same in every example under vmap) that the caller then
  // extends with values of x, a helper that returns another's list, and a copy of one in braces
  std::vector<fg::Tensor> mixed = first_last(fg::ones({4}, x.options()) * 2.0);
  mixed.push_back(x[1].narrow(0, 0, 1));
  const std::vector<fg::Tensor> forwarded = unrolled_twice(x[2], x[0]);
  const std::vector<fg::Tensor> copied{first_last(x[0])};
  return total + (mixed[0] * mixed[2]).sum() + forwarded.back().sum() + copied[1].sum();
}

// ---- writes through references that the transforms must see (issue 42's silent wrong results):
// a range-for that binds a vector's elements by reference and assigns them (with jumps, through a
// helper), helpers that assign the elements of a vector they take by reference, and std::swap
void scale_all(std::vector<fg::Tensor>& v, const fg::Tensor& y) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = v[i] * y;
}
void sines(std::vector<fg::Tensor>& v) {
  for (auto& t : v) t = t.sin() + 0.5;
}
void scale_then_sine(std::vector<fg::Tensor>& v, const fg::Tensor& y) {
  scale_all(v, y);
  sines(v);
}
FUNCGEN("element_refs_grad = grad(element_refs)")
FUNCGEN("element_refs_jvp = jvp(element_refs)")
FUNCGEN("element_refs_jacfwd = jacfwd(element_refs)")
FUNCGEN("element_refs_hessian = hessian(element_refs)")
FUNCGEN("element_refs_jacrev2 = jacrev(jacrev(element_refs))")
FUNCGEN("element_refs_hvp = jvp(grad(element_refs))")
FUNCGEN("element_refs_vmap = vmap(element_refs)")
FUNCGEN("element_refs_psg = vmap(grad(element_refs))")
FUNCGEN("element_refs_vjacrev = vmap(jacrev(element_refs))")
fg::Tensor element_refs(const fg::Tensor& x) {
  std::vector<fg::Tensor> v{x, x * 2, x.cos()};
  for (auto& t : v) t = t.sin();
  int k = 0;
  for (fg::Tensor& t : v) {
    if (k++ == 1) continue;  // (a jump kept as text)
    t = t * x;
    if (k == 3) break;
    t = t + 1.0;
  }
  for (const auto& t : v) k += static_cast<int>(t.dim());
  std::vector<fg::Tensor> w{x[0], x[1]};
  scale_all(w, x[2]);
  scale_then_sine(w, x[0]);
  fg::Tensor total = (v[0] * v[1] + v[2]).sum() + (w[0] * w[1]).sum();
  fg::Tensor a = x * 2.0, b = x.cos();
  std::swap(a, b);  // (the assignments it makes)
  total = total + (a * x + b).sum();
  return total * static_cast<double>(k);
}

// ---- a switch whose case labels stand inside a block of another case (entered there, the rest
// of the block runs), and local C arrays of numbers
FUNCGEN("nested_cases_grad = grad(nested_cases)")
FUNCGEN("nested_cases_jvp = jvp(nested_cases)")
FUNCGEN("nested_cases_jacfwd = jacfwd(nested_cases)")
FUNCGEN("nested_cases_hessian = hessian(nested_cases)")
FUNCGEN("nested_cases_jacrev2 = jacrev(jacrev(nested_cases))")
FUNCGEN("nested_cases_hvp = jvp(grad(nested_cases))")
FUNCGEN("nested_cases_vmap = vmap(nested_cases)")
FUNCGEN("nested_cases_psg = vmap(grad(nested_cases))")
FUNCGEN("nested_cases_vjacrev = vmap(jacrev(nested_cases))")
fg::Tensor nested_cases(const fg::Tensor& x) {
  const double weights[] = {0.5, 1.5, -2.0};
  const int64_t rows[2] = {2, 0};
  fg::Tensor y = x;
  for (int k = 0; k < 4; ++k) {
    switch (k % 3) {
      case 0: {
        y = y * weights[k % 3];
        case 1:
          y = y.sin() + x[rows[k % 2]];
          break;
      }
      default:
        y = y * weights[2];
    }
  }
  return (y * y).sum();
}

// ---- variables declared in conditions: if and switch with an init statement, an if and a while
// with a condition variable, and if constexpr
FUNCGEN("condition_vars_grad = grad(condition_vars)")
FUNCGEN("condition_vars_jvp = jvp(condition_vars)")
FUNCGEN("condition_vars_jacfwd = jacfwd(condition_vars)")
FUNCGEN("condition_vars_hessian = hessian(condition_vars)")
FUNCGEN("condition_vars_jacrev2 = jacrev(jacrev(condition_vars))")
FUNCGEN("condition_vars_hvp = jvp(grad(condition_vars))")
FUNCGEN("condition_vars_vmap = vmap(condition_vars)")
FUNCGEN("condition_vars_psg = vmap(grad(condition_vars))")
FUNCGEN("condition_vars_vjacrev = vmap(jacrev(condition_vars))")
fg::Tensor condition_vars(const fg::Tensor& x) {
  fg::Tensor y = x;
  if (const int64_t n = x.size(0); n > 2) y = y * 2;
  if (int64_t rows = x.size(0) - 3) {
    y = y + static_cast<double>(rows);
  } else {
    y = y.sin();
  }
  switch (const int64_t c = x.size(1); c % 3) {
    case 1:
      y = y * y;
      break;
    default:
      y = y.cos();
  }
  int64_t k = 3;
  while (int64_t left = k--) {
    if (left == 2) continue;
    y = y * 0.9 + x * static_cast<double>(left);
  }
  if constexpr (sizeof(double) == 8) {
    y = y.tanh();
  } else {
    y = y.sin();
  }
  return y.sum();
}

// ---- a std::array filled, read with front() and back()
FUNCGEN("tuples_and_fills_grad = grad(tuples_and_fills)")
FUNCGEN("tuples_and_fills_jvp = jvp(tuples_and_fills)")
FUNCGEN("tuples_and_fills_jacfwd = jacfwd(tuples_and_fills)")
FUNCGEN("tuples_and_fills_hessian = hessian(tuples_and_fills)")
FUNCGEN("tuples_and_fills_jacrev2 = jacrev(jacrev(tuples_and_fills))")
FUNCGEN("tuples_and_fills_hvp = jvp(grad(tuples_and_fills))")
FUNCGEN("tuples_and_fills_vmap = vmap(tuples_and_fills)")
FUNCGEN("tuples_and_fills_psg = vmap(grad(tuples_and_fills))")
FUNCGEN("tuples_and_fills_vjacrev = vmap(jacrev(tuples_and_fills))")
fg::Tensor tuples_and_fills(const fg::Tensor& x) {
  std::array<fg::Tensor, 3> rows;
  rows.fill(x[0]);
  rows[1] = rows[1] * x[1];
  rows.back() = rows.back() + x[2];
  const fg::Tensor t = rows.front() * rows[1] * 1.5 + rows.front().sin();
  return (t * rows.back()).sum();
}

// ---- pointers that point at one tensor variable for their whole life: *p and p-> are that
// variable, written (`*p += ...`, `*p = ...`) or read, as C++ has them; a C array of tensors
// read at run-time indices, in a range-for and sized by std::size
FUNCGEN("pointers_grad = grad(pointers)")
FUNCGEN("pointers_jvp = jvp(pointers)")
FUNCGEN("pointers_jacfwd = jacfwd(pointers)")
FUNCGEN("pointers_hessian = hessian(pointers)")
FUNCGEN("pointers_jacrev2 = jacrev(jacrev(pointers))")
FUNCGEN("pointers_hvp = jvp(grad(pointers))")
FUNCGEN("pointers_vmap = vmap(pointers)")
FUNCGEN("pointers_psg = vmap(grad(pointers))")
FUNCGEN("pointers_vjacrev = vmap(jacrev(pointers))")
fg::Tensor pointers(const fg::Tensor& x) {
  fg::Tensor y = x.sin();
  fg::Tensor* p = &y;
  const fg::Tensor* in = &x;
  *p += *in;                                    // y changes in place
  for (int64_t i = 1; i < p->size(0); ++i) *p = *p * (*in)[i];  // y assigned through p
  y = y + 0.5;                                  // p sees the new y
  auto* q = &y;
  q->mul_(x.cos());
  const fg::Tensor parts[3] = {x, *p * 2, x.exp()};
  fg::Tensor s = parts[0];
  for (size_t i = 1; i < std::size(parts); ++i) s = s + parts[i] * parts[i - 1];
  for (const fg::Tensor& t : parts) s = s * t.sin();
  return p->sum() + (*q * *in).sum() + s.sum();
}

// ---- vmap of a function that returns a vector of tensors built at run time: one batched tensor per
// element (JAX and torch.func return the list of the batched elements)
// Returns of lists that the mapped input reaches and of one it does not: each returned batched.
FUNCGEN("either_vmap = vmap(either, in_dims=(0, None, None))")
std::vector<fg::Tensor> either(const fg::Tensor& x, const fg::Tensor& w, bool from_x) {
  std::vector<fg::Tensor> mapped;
  mapped.push_back(x.sin());
  std::vector<fg::Tensor> shared;
  shared.push_back(w * 3.0);
  if (from_x) return mapped;
  return shared;
}

FUNCGEN("filled_rows_vmap = vmap(filled_rows)")
std::vector<fg::Tensor> filled_rows(const fg::Tensor& x) {
  std::vector<fg::Tensor> rows(x.size(0) + 1);
  for (int64_t i = 0; i < x.size(0); ++i) rows[i] = x[i].exp() * static_cast<double>(i);
  rows.back() = fg::ones({2}, x.options());  // the same in every example
  return rows;
}

// ---- C arrays of tensors whose elements are assigned (`parts[i] = y`), at constant indices and
// in a loop: the braced std::vector they stand for, its elements set
FUNCGEN("arrays_written_grad = grad(arrays_written)")
FUNCGEN("arrays_written_jvp = jvp(arrays_written)")
FUNCGEN("arrays_written_jacfwd = jacfwd(arrays_written)")
FUNCGEN("arrays_written_hessian = hessian(arrays_written)")
FUNCGEN("arrays_written_jacrev2 = jacrev(jacrev(arrays_written))")
FUNCGEN("arrays_written_hvp = jvp(grad(arrays_written))")
FUNCGEN("arrays_written_vmap = vmap(arrays_written)")
FUNCGEN("arrays_written_psg = vmap(grad(arrays_written))")
FUNCGEN("arrays_written_vjacrev = vmap(jacrev(arrays_written))")
fg::Tensor arrays_written(const fg::Tensor& x) {
  fg::Tensor parts[2] = {x, x.sin()};
  parts[1] = parts[0] * 2 + parts[1];
  fg::Tensor ring[3] = {x, x.cos(), x * x};
  for (int i = 0; i < 3; ++i) ring[i] = ring[i] * ring[(i + 1) % 3];
  return (parts[0] + parts[1]).sum() + (ring[0] + ring[1] * ring[2]).sum();
}

}  // namespace cs
