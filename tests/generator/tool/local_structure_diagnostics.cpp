// Local structures (a struct, pair, array or nested tuple of tensors, held one variable per leaf)
// and helpers that return them or change what they are passed go through every transform
// (tests/generator/constructs: local_structs, out_params); what stays unsupported is reported here.
// EXIT: 1
#include <funcgen/funcgen.h>

#include <array>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace diag {

struct State {
  fg::Tensor h, c;
};
struct Carry {
  State state;
  fg::Tensor total;
};

static Carry carry_of(const fg::Tensor& x) { return Carry{State{x, x.sin()}, x.sum()}; }
static State step(const State& s, const fg::Tensor& x) { return State{s.h + x, s.c * x}; }
static std::array<fg::Tensor, 2> ends_of(const fg::Tensor& x) { return {x[0], x[1]}; }

// A part of a returned structure that is a structure itself, read off the call.
FUNCGEN("g1 = grad(part_of_call)")
fg::Tensor part_of_call(const fg::Tensor& x) {
  State s = carry_of(x).state;
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:13: error: the structure 'carry_of' returns cannot be taken apart here; store it in a variable first (auto r = carry_of(...);) [funcgen-unsupported]
  return s.h.sum();
}

// A returned structure passed straight on to a helper.
FUNCGEN("g2 = grad(call_into_call)")
fg::Tensor call_into_call(const fg::Tensor& x) {
  State s = step(step(State{x, x}, x), x);
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:18: error: the structure 'step' returns cannot be taken apart here; store it in a variable first (auto r = step(...);) [funcgen-unsupported]
  return s.c.sum();
}

// A helper that returns a map: its keys are known only at run time.
static std::map<std::string, fg::Tensor> named(const fg::Tensor& x) { return {{"a", x}}; }
FUNCGEN("g3 = grad(reads_named)")
fg::Tensor reads_named(const fg::Tensor& x) { return named(x).at("a").sum(); }
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:54: error: 'named' returns a std::map or std::optional of tensors, which funcgen cannot take apart in its caller yet; return a struct, std::array or std::tuple of tensors [funcgen-unsupported]

// A helper that writes its by-value parameter in place and then assigns it: the caller sees the
// write but not the assignment.
static fg::Tensor mixed(fg::Tensor h) {
  h.mul_(2);
  h = h + 1;
  return h.sum();
}
FUNCGEN("g4 = grad(calls_mixed)")
fg::Tensor calls_mixed(const fg::Tensor& x) {
  fg::Tensor h = x * 1;
  return mixed(h) + h.sum();
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:10: error: 'mixed' both assigns its parameter 'h' and writes into it in place, which cannot be differentiated yet: its caller sees the write but not the assignment; return the new value from 'mixed' instead [funcgen-unsupported]
}

// A helper that writes in place, under an if, into a view it is passed.
static void bump_if(const fg::Tensor& v, bool on) {
  if (on) v.mul_(2);
}
FUNCGEN("g5 = grad(view_in_if)")
fg::Tensor view_in_if(const fg::Tensor& x) {
  fg::Tensor m = x * 1;
  bump_if(m[0], x.dim() > 1);
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:3: error: 'bump_if' writes in place into a view of a tensor it is passed under an 'if' or in a loop, which cannot be differentiated yet; pass the tensor itself, or write into it in the caller [funcgen-unsupported]
  return (m * x).sum();
}

// An element of a std::tuple variable assigned.
FUNCGEN("g6 = grad(tuple_write)")
fg::Tensor tuple_write(const fg::Tensor& x) {
  std::tuple<fg::Tensor, fg::Tensor> t{x, x.sin()};
  std::get<0>(t) = x * 2;
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:3: error: an element of the std::tuple 't' cannot be assigned yet; hold the tensors in a struct, std::pair or std::array (funcgen keeps each in a variable of its own) or in separate variables [funcgen-unsupported]
  return (std::get<0>(t) * std::get<1>(t)).sum();
}

// A number in a structure passed by reference, assigned: funcgen passes it by value.
struct Counted {
  fg::Tensor w;
  int64_t steps;
};
static void count(Counted& c) { c.steps = c.steps + 1; }
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:33: error: 'c.steps', a number in a structure passed by reference, cannot be assigned yet; return the new value instead [funcgen-unsupported]
FUNCGEN("g7 = grad(counts)")
fg::Tensor counts(const fg::Tensor& x) {
  Counted c{x, 0};
  count(c);
  return c.w.sum() * double(c.steps);
}

// A reference parameter assigned where it is passed an element of a tuple.
static void add_to(fg::Tensor& total, const fg::Tensor& x) { total = total + x; }
FUNCGEN("g8 = grad(into_tuple)")
fg::Tensor into_tuple(const fg::Tensor& x) {
  auto t = std::make_tuple(x * 1, x * 2);
  add_to(std::get<0>(t), x);
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:10: error: 'add_to' assigns its reference parameter 'total', which cannot be differentiated where it is passed an element of a tuple or another expression; pass it a variable [funcgen-unsupported]
  return std::get<0>(t).sum();
}

// Returned maps and vectors: built where they are returned, with literal keys, the same in every return.
FUNCGEN("v9 = vmap(keys_differ)")
std::map<std::string, fg::Tensor> keys_differ(const fg::Tensor& x) {
  if (x.dim() > 1) return {{"a", x}};
  return {{"b", x}};
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:10: error: every return must build the map with the same keys as the first ('a') [funcgen-unsupported]
}
static const std::string kName = "a";
FUNCGEN("v10 = vmap(key_not_literal)")
std::map<std::string, fg::Tensor> key_not_literal(const fg::Tensor& x) { return {{kName, x}}; }
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:82: error: a returned map's keys must be string literals ({"loss", loss}) [funcgen-unsupported]
FUNCGEN("v11 = vmap(from_param)")
std::vector<fg::Tensor> from_param(const std::vector<fg::Tensor>& v) { return v; }
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:79: error: a returned std::vector must be built where it is returned (return {a, b};): funcgen returns its tensors one by one, so its length must be known when the code is generated [funcgen-unsupported]

// A structure a helper returns, read at an index known only at run time.
FUNCGEN("g12 = grad(runtime_index)")
fg::Tensor runtime_index(const fg::Tensor& x) {
  const int i = x.dim() > 1 ? 1 : 0;
  return carry_of(x).state.h[i].sum() + ends_of(x)[i].sum();
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:41: error: the structure 'ends_of' returns is read at an index known only at run time; read it at a constant index, or store it in a variable first [funcgen-unsupported]
}

// A returned map with a key twice.
FUNCGEN("v14 = vmap(twice_keyed)")
std::map<std::string, fg::Tensor> twice_keyed(const fg::Tensor& x) { return {{"a", x}, {"a", x * 2}}; }
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:77: error: the returned map has the key 'a' twice; std::map keeps only the first [funcgen-unsupported]

// A helper inlined to be differentiated that returns early under an 'if' on numbers.
static void clip_to(fg::Tensor& g, double m) {
  if (m <= 0) return;
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:3: error: a return inside an 'if' on numbers in 'clip_to', which is inlined into its caller to be differentiated, cannot be differentiated yet; put the rest of 'clip_to' in the 'if' or its 'else' instead [funcgen-unsupported]
  g = g.clamp(-m, m);
}
FUNCGEN("g15 = grad(clipped)")
fg::Tensor clipped(const fg::Tensor& x) {
  fg::Tensor g = x * x;
  clip_to(g, 1.0);
  return g.sum();
}

// A helper that takes a structure by non-const reference and returns a number, called as it is.
static double count_of(State& s) { return static_cast<double>(s.h.numel()); }
FUNCGEN("g16 = grad(counted)")
fg::Tensor counted(const fg::Tensor& x) {
  State s{x, x};
  const double n = count_of(s);
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:20: error: 'count_of' takes a structure by non-const reference and returns a number, which cannot be differentiated yet; take the structure by const reference [funcgen-unsupported]
  return x.sum() * n;
}

// A vector of tensors built at run time and returned: vmap returns its batched elements; the
// derivatives of such an output (its length known only when it runs) are not generated yet.
FUNCGEN("j17 = jvp(trajectory)")
std::vector<fg::Tensor> trajectory(const fg::Tensor& x, int64_t steps) {
  std::vector<fg::Tensor> out;
  for (int64_t t = 0; t < steps; ++t) out.push_back(x * static_cast<double>(t));
  return out;
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:3: error: jvp of a function that returns a std::vector of tensors built at run time (its length known only when it runs) cannot be generated yet; return fg::stack(out) where its tensors have one shape [funcgen-unsupported]
}

// A vector a helper built, read where it is returned.
static std::vector<fg::Tensor> halves(const fg::Tensor& x) {
  std::vector<fg::Tensor> out{x * 0.5, x * 0.25};
  return out;
}
FUNCGEN("g18 = grad(reads_halves)")
fg::Tensor reads_halves(const fg::Tensor& x) { return halves(x)[1].sum(); }
// CHECK: local_structure_diagnostics.cpp:[[@LINE-1]]:55: error: the vector 'halves' returns is used where it is returned, which cannot be transformed yet; store it in a variable first (auto v = halves(...);) [funcgen-unsupported]

// CHECK: 17 errors generated.
}  // namespace diag
