// Writes through names that funcgen cannot follow yet (issue 42): each is an error at the construct
// that says what to write instead, never code that misses the write. What funcgen follows (a
// range-for by reference, a helper assigning a vector's elements, a reference to a variable) is
// transformed: tests/generator/constructs (element_refs, nested_cases).
// EXIT: 1
#include <funcgen/funcgen.h>

#include <tuple>
#include <vector>

namespace diag {

// A helper that assigns the elements of a vector it takes by value: its own copy.
void scaled_copy(std::vector<fg::Tensor> v, const fg::Tensor& y, fg::Tensor& out) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = v[i] * y;
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:41: error: an element of 'v', a std::vector of tensors taken by value, cannot be assigned yet; take it by reference (std::vector<fg::Tensor>& v) to change the caller's list, or build a new vector of the results and return it [funcgen-unsupported]
  out = v[0];
}
FUNCGEN("g1 = grad(by_value)")
fg::Tensor by_value(const fg::Tensor& x) {
  std::vector<fg::Tensor> v{x, x * 2};
  fg::Tensor o;
  scaled_copy(v, x, o);
  return o.sum();
}

// A non-const reference to an element of a vector.
FUNCGEN("g2 = grad(element_reference)")
fg::Tensor element_reference(const fg::Tensor& x) {
  std::vector<fg::Tensor> v{x, x * 2};
  fg::Tensor& r = v[0];
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:3: error: 'r' is a non-const reference to 'v[0]', which cannot be transformed yet; assign the element itself (v[0] = ...), or bind a reference to a variable [funcgen-unsupported]
  r = r * 2;
  return v[0].sum();
}

// A case label inside an if of its switch (Duff's device).
FUNCGEN("g3 = grad(label_in_if)")
fg::Tensor label_in_if(const fg::Tensor& x, int n) {
  fg::Tensor y = x;
  switch (n) {
    case 0:
      if (n > 5) {
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:7: error: an if with a case label of its switch inside cannot be transformed; end the if before the label, or repeat its code under each label [funcgen-unsupported]
        case 1:
          y = y * 2;
      }
  }
  return y.sum();
}

// The transformed function assigns the elements of a vector it is passed.
FUNCGEN("g4 = grad(writes_input, argnums=1)")
fg::Tensor writes_input(std::vector<fg::Tensor>& v, const fg::Tensor& x) {
  for (auto& t : v) t = t * x;
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:8: error: an element of 'v', a parameter of 'writes_input', is assigned, which cannot be differentiated: the transforms take their inputs as values; build a new vector of the results (std::vector<fg::Tensor> out; out.push_back(...)) and return it [funcgen-unsupported]
  return (v[0] + x).sum();
}

// The vector changes inside a range-for that binds its elements by reference.
FUNCGEN("g5 = grad(changed_while_bound)")
fg::Tensor changed_while_bound(const fg::Tensor& x) {
  std::vector<fg::Tensor> v{x, x};
  for (auto& t : v) {
    t = t * 2;
    v[1] = v[1] + t;
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:5: error: 'v' cannot be changed inside a range-based for loop that binds its elements by reference ('t'); loop over an index instead (for (size_t i = 0; i < v.size(); ++i)) [funcgen-unsupported]
  }
  return (v[0] + v[1]).sum();
}

// An assignment to an element inside an expression.
FUNCGEN("g6 = grad(assigned_inside)")
fg::Tensor assigned_inside(const fg::Tensor& x) {
  std::vector<fg::Tensor> v{x, x};
  fg::Tensor y = x;
  fg::Tensor z = (v[0] = x * 2) + 1;
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:19: error: an assignment to 'v[0]' inside an expression cannot be transformed; assign it in a statement of its own [funcgen-unsupported]
  return (y + z).sum();
}

// C arrays: of arrays, and one used as a pointer.
double first(const double* w) { return w[0]; }
FUNCGEN("g7 = grad(arrays)")
fg::Tensor arrays(const fg::Tensor& x) {
  const double m[2][2] = {{1, 2}, {3, 4}};
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:3: error: 'm' is a C array of arrays, which cannot be transformed yet; declare it as a std::array (const std::array<std::array<double, 2>, 2> m) or a std::vector [funcgen-unsupported]
  const double w[] = {0.5, 1.5};
  return (x * m[0][1] * first(w)).sum();
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:31: error: the C array 'w' is used as a pointer here, which cannot be transformed; declare it as a std::array (const std::array<double, 2> w) and pass w.data() or the array itself [funcgen-unsupported]
}


// A binding by reference of a std::tuple's element, assigned.
FUNCGEN("g8 = grad(tuple_binding)")
fg::Tensor tuple_binding(const fg::Tensor& x) {
  auto t = std::make_tuple(x, x * 2);
  auto& [a, b] = t;
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:10: error: 'a' names an element of 't' by reference and is assigned, which cannot be transformed yet; hold the tensors in a struct, std::pair or std::array, or bind copies (auto [...] = ...) [funcgen-unsupported]
  a = a * 3;
  return (std::get<0>(t) + b).sum();
}

// A function funcgen cannot see into that takes a tensor by non-const reference.
void rescale(fg::Tensor& t, double s);
FUNCGEN("g9 = grad(opaque_write)")
fg::Tensor opaque_write(const fg::Tensor& x) {
  fg::Tensor y = x * 2;
  rescale(y, 3.0);
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:11: error: 'rescale' takes 'y' by non-const reference and may change it, which the transforms cannot follow (they see fg ops and the functions of this file); assign its result instead, or call it outside the transformed function [funcgen-unsupported]
  return y.sum();
}

// A pointer pointed at another tensor: what *p names depends on the run (funcgen follows one that
// points at one variable, tests/generator/constructs' pointers).
FUNCGEN("g10 = grad(repointed)")
fg::Tensor repointed(const fg::Tensor& x, bool second) {
  fg::Tensor a = x * 2, b = x.sin();
  fg::Tensor* p = &a;
  if (second) p = &b;
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:15: error: the pointer 'p' is used here other than as *p or p->, which cannot be transformed; funcgen follows a pointer that points at one tensor variable for its whole life; use that tensor (a) or a reference to it [funcgen-unsupported]
  *p += x;
  return (a + b).sum();
}

// A pointer to an element of a vector.
FUNCGEN("g11 = grad(element_pointer)")
fg::Tensor element_pointer(const fg::Tensor& x) {
  std::vector<fg::Tensor> v{x, x * 2};
  fg::Tensor* p = &v[1];
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:3: error: 'p' is a pointer to a tensor that does not point at a tensor variable (&v[1]), which cannot be transformed; use the tensor itself (fg::Tensor is a handle: copies share its storage) or a reference [funcgen-unsupported]
  return (*p * v[0]).sum();
}

// A C array of tensors passed on as a pointer.
fg::Tensor first_of(const fg::Tensor* ts) { return ts[0]; }
FUNCGEN("g12 = grad(array_decays)")
fg::Tensor array_decays(const fg::Tensor& x) {
  fg::Tensor parts[2] = {x, x * 2};
  return first_of(parts).sum();
// CHECK: memory_diagnostics.cpp:[[@LINE-1]]:19: error: the C array of tensors 'parts' is used here other than as parts[i], in a range-for or in std::size, which cannot be transformed; declare it as a std::vector<fg::Tensor> (std::vector<fg::Tensor> parts{...}) [funcgen-unsupported]
}

// CHECK: 13 errors generated.

}  // namespace diag
