// The constructs of tests/generator/constructs in the forms funcgen cannot transform: each is an
// error at the construct that says what to write instead (never code that computes something else).
// EXIT: 1
#include <funcgen/funcgen.h>

#include <set>
#include <vector>

namespace diag {

// A vector filled with push_back that did not start empty, with braces or as copies of one value.
FUNCGEN("g1 = grad(copied_start)")
fg::Tensor copied_start(const fg::Tensor& x) {
  const std::vector<fg::Tensor> first{x.sin()};
  std::vector<fg::Tensor> parts = first;
  parts.push_back(x);
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:3: error: push_back into 'parts' cannot be transformed: funcgen transforms a vector of tensors declared empty or with braces and filled with push_back when the function then only reads its elements (parts[i], back(), a range-for by const reference), assigns them (parts[i] = y), sizes, concatenates or stacks it, or passes it to a helper, but it is not declared empty, with braces or as copies of one value [funcgen-unsupported]
  return fg::stack(parts).sum();
}

// An element of a pushed and stacked vector changed in place.
FUNCGEN("g2 = grad(element_written)")
fg::Tensor element_written(const fg::Tensor& x) {
  std::vector<fg::Tensor> v;
  v.push_back(x);
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:3: error: push_back into 'v' cannot be transformed: funcgen transforms a vector of tensors declared empty or with braces and filled with push_back when the function then only reads its elements (v[i], back(), a range-for by const reference), assigns them (v[i] = y), sizes, concatenates or stacks it, or passes it to a helper, but an element of it is changed in place or bound to a non-const reference; assign the new value (v[i] = y) instead [funcgen-unsupported]
  v[0].mul_(2);
  return fg::stack(v).sum();
}

// A tensor written in place after a vector took it (its entry sees the write), and the base of
// views pushed in a loop.
FUNCGEN("g2d = grad(pushed_then_written)")
fg::Tensor pushed_then_written(const fg::Tensor& x) {
  std::vector<fg::Tensor> v;
  fg::Tensor h = x * 1.0;
  v.push_back(h);
  h.mul_(2);
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:3: error: in-place 'mul_' writes into a tensor that the vector 'v' holds (push_back and assigning an element share its memory), which cannot be differentiated yet; store a clone(), or compute a new tensor (h = h * 2) instead of writing in place [funcgen-unsupported]
  return v[0].sum() + h.sum();
}
FUNCGEN("g2e = grad(views_pushed)")
fg::Tensor views_pushed(const fg::Tensor& x) {
  std::vector<fg::Tensor> v;
  fg::Tensor h = x * 1.0;
  for (int i = 0; i < 2; ++i) v.push_back(h.select(0, i));
  h.add_(1);
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:3: error: in-place 'add_' writes into a tensor that the vector 'v' holds (push_back and assigning an element share its memory), which cannot be differentiated yet; store a clone(), or compute a new tensor (h = h * 2) instead of writing in place [funcgen-unsupported]
  return v[0].sum() + v.back().sum();
}

// A tensor written in place on every trip of a loop that also pushes it: the list's entries share
// its memory.
FUNCGEN("g2f = grad(accumulated)")
fg::Tensor accumulated(const fg::Tensor& x) {
  std::vector<fg::Tensor> v;
  fg::Tensor acc = x[0] * 1.0;
  for (int64_t i = 0; i < x.size(0); ++i) {
    acc.add_(x[i].sin());
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:5: error: in-place 'add_' writes into a tensor that a vector of tensors took on an earlier trip of this loop (push_back and assigning an element share its memory), which cannot be differentiated yet; store a clone(), or compute a new tensor (h = h * 2) instead of writing in place [funcgen-unsupported]
    v.push_back(acc);
  }
  return (v[0] * v[1]).sum();
}

// A push_back under a condition on mapped values with control_flow='select' (both branches run).
FUNCGEN("v2g = vmap(selected_push, control_flow='select')")
fg::Tensor selected_push(const fg::Tensor& x) {
  std::vector<fg::Tensor> w;
  w.push_back(x.sin());
  if (x.sum().item<double>() > 0) w.push_back(x.exp());
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:35: error: control_flow='select' runs both branches, so they must be free of side effects; a push_back into 'w' is not (its length would differ per example); push_back after the if, the value chosen with fg::where [funcgen-unsupported]
  return w.back().sum();
}

// A list concatenated in a loop's condition (evaluated on every trip).
FUNCGEN("g2h = grad(joined_in_condition)")
fg::Tensor joined_in_condition(const fg::Tensor& x) {
  std::vector<fg::Tensor> v{x};
  while (fg::cat(v).size(0) < 12) v.push_back(v.back().sin());
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:10: error: concatenating or stacking the list 'v' here cannot be transformed: funcgen joins a vector of tensors in a statement of its own or an if's condition (not a loop's, a side of ?:, the right of && or ||, or a lambda); compute it into a variable before this [funcgen-unsupported]
  return v.back().sum();
}

// A lambda's copy of a variable that the function assigns afterwards.
FUNCGEN("g3 = grad(late_copy)")
fg::Tensor late_copy(const fg::Tensor& x) {
  fg::Tensor a = x;
  auto add_a = [a](const fg::Tensor& t) { return t + a; };
  for (int i = 0; i < 3; ++i) a = add_a(a);
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:31: error: 'a' is assigned after a lambda captured a copy of it, which cannot be transformed; capture it by reference or pass it as a parameter [funcgen-unsupported]
  return a.sum();
}

// A lambda that reads a constant of the function without capturing it.
FUNCGEN("g5 = grad(uncaptured)")
fg::Tensor uncaptured(const fg::Tensor& x) {
  constexpr double k = 2.0;
  auto scale = [](const fg::Tensor& t) { return t * k; };
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:53: error: the lambda reads 'k' of the function around it without capturing it, which cannot be transformed; capture it ([&] or [k]) [funcgen-unsupported]
  return scale(x).sum();
}

// A lambda called where it is written.
FUNCGEN("g6 = grad(invoked)")
fg::Tensor invoked(const fg::Tensor& x) {
  return [&] { return x.sin(); }().sum();
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:10: error: a lambda called where it is not a variable of this function cannot be transformed; define it with 'auto name = [...](...) { ... };' and call it by its name [funcgen-unsupported]
}

// A range-based for loop over a container without an index (a C array or std::vector is looped over).
FUNCGEN("g7 = grad(set_loop)")
fg::Tensor set_loop(const fg::Tensor& x) {
  const std::set<int> dims{0, 1};
  fg::Tensor s = x.sum();
  for (int d : dims) s = s + x.sum(d).sum();
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:3: error: a range-based for loop that uses tensors cannot be transformed; loop over an index instead (for (size_t i = 0; i < v.size(); ++i) ... v[i]) [funcgen-unsupported]
  return s;
}

// A member function that changes its object, one with a parameter named self, one that reads a
// private member (the generated functions are free functions).
struct Net {
  fg::Tensor w;
  FUNCGEN("g11 = grad(private_scale)")
  fg::Tensor private_scale(const fg::Tensor& x) const { return (x * w).sum() * kScale; }
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:80: error: 'diag::Net::kScale' is not public, so the functions funcgen generates (free functions) cannot read it; make it public or pass it as a parameter [funcgen-unsupported]
  FUNCGEN("g9 = grad(changes)")
  fg::Tensor changes(const fg::Tensor& x) { return (x * w).sum(); }
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:14: error: 'Net::changes' must be a const member function to be transformed: its object's tensors are its inputs, which it cannot change; declare it 'const' [funcgen-unsupported]
  FUNCGEN("g10 = grad(named_self)")
  fg::Tensor named_self(const fg::Tensor& self) const { return (self * w).sum(); }
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:43: error: a parameter of a member function may not be named 'self': funcgen passes the object as 'self'; rename it [funcgen-unsupported]

 private:
  static constexpr double kScale = 2.0;
};

// A vector of a tensor's slices whose elements are written: held as the tensor, it cannot be.
FUNCGEN("sw = grad(slices_written)")
fg::Tensor slices_written(const fg::Tensor& x) {
  std::vector<fg::Tensor> rows = x.unbind(0);
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:34: error: the slices of a tensor in 'rows' cannot be transformed: funcgen transforms a vector of a tensor's slices when the function only reads its elements, sizes it, loops over it or stacks it (fg::stack(rows)) [funcgen-unsupported]
  rows[0] = rows[1] * 2.0;
  return rows[0].sum();
}

// One looped over by non-const reference may have its elements written: not yet.
FUNCGEN("sr = grad(slices_by_reference)")
fg::Tensor slices_by_reference(const fg::Tensor& x) {
  std::vector<fg::Tensor> rows = x.unbind(0);
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:34: error: the slices of a tensor in 'rows' cannot be transformed: funcgen transforms a vector of a tensor's slices when the function only reads its elements, sizes it, loops over it or stacks it (fg::stack(rows)) [funcgen-unsupported]
  for (auto& r : rows) r = r * 2.0;
  return fg::stack(rows).sum();
}

// The pieces of a split, joined again: of different sizes, they are not held as one tensor.
FUNCGEN("pj = grad(pieces_joined)")
fg::Tensor pieces_joined(const fg::Tensor& x) {
  std::vector<fg::Tensor> parts = x.split(2, 1);
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:35: error: the pieces in 'parts' cannot be transformed: funcgen transforms a vector of a tensor's pieces (split, chunk) when the function only reads its elements (parts[i]), sizes it or loops over it; to join them again, use the tensor they came from [funcgen-unsupported]
  return fg::cat(parts, 1).sum() + parts[0].sum();
}

// A write into an expanded view, under AD: the message names the variable as the user wrote it
// (not the version AD made of it).
FUNCGEN("ew = grad(expanded_write)")
fg::Tensor expanded_write(const fg::Tensor& x) {
  fg::Tensor y = x * 2.0;
  y = y * 3.0;
  y.expand({2, 3}).add_(1.0);
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:3: error: in-place 'add_' writes into a view of 'y' made by 'expand', which cannot be differentiated; clone() the view first [funcgen-unsupported]
  return y.sum();
}

// A break of a switch inside an `if` on scalars with an initializer (kept as C++ text): a chain of
// ifs would make it leave the loop instead.
FUNCGEN("hb = grad(hidden_break)")
fg::Tensor hidden_break(const fg::Tensor& x) {
  fg::Tensor y = x;
  for (int k = 0; k < 3; ++k) {
    switch (k) {
// CHECK: construct_diagnostics.cpp:[[@LINE-1]]:5: error: a 'break' of this switch inside a statement on scalars that funcgen keeps as C++ (an 'if' with an initializer, say) cannot be differentiated yet; declare the scalar before the 'if' [funcgen-unsupported]
      case 0:
        if (int j = k + 1; j > 1) break;
        y = y.sin();
        break;
      default:
        y = y * 2.0;
    }
  }
  return y.sum();
}

// CHECK: 19 errors generated.
}  // namespace diag
