// Fuzz target 4: the runtime's element-wise ops (the op database of tests/runtime/op_db.h) on
// random shapes, layouts (strides, offsets, expanded and diagonal views), dtypes and broadcasts,
// against the independent scalar reference of tests/runtime/reference.h. Operands that do not
// broadcast, and in-place writes whose result does not fit the written tensor, must raise an
// fg::Error; nothing may crash or raise anything else.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "op_db.h"

namespace {

using ref::Array;
using ref::Shape;

const fg::ScalarType kDtypes[] = {fg::kFloat, fg::kDouble, fg::kLong};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_ops: %s\n", what.c_str());
  std::abort();
}

Shape draw_shape(FuzzedDataProvider& in) {
  Shape s(in.ConsumeIntegralInRange<size_t>(0, 4));
  for (int64_t& d : s) d = in.ConsumeIntegralInRange<int64_t>(0, 5);
  return s;
}

// A shape that broadcasts with `s` (dims of `s` dropped from the front, or set to 1), or,
// sometimes, one that does not.
Shape broadcast_partner(FuzzedDataProvider& in, const Shape& s) {
  if (in.ConsumeIntegralInRange(0, 7) == 0) return draw_shape(in);
  Shape p(s.begin() + in.ConsumeIntegralInRange<size_t>(0, s.size()), s.end());
  for (int64_t& d : p)
    if (in.ConsumeBool()) d = 1;
  return p;
}

ref::Input draw_input(FuzzedDataProvider& in, ref::Rng& rng, const Shape& shape, fg::ScalarType dtype,
                      const ref::Domain& domain, bool writable) {
  const auto& layouts = writable ? ref::writable_layouts() : ref::all_layouts();
  const ref::Layout layout = layouts[in.ConsumeIntegralInRange<size_t>(0, layouts.size() - 1)];
  return ref::make_input(shape, dtype, layout, rng, domain);
}

void expect_values(const fg::Tensor& actual, const Array& expected, fg::ScalarType dtype, const std::string& what) {
  if (actual.dtype() != dtype) fail(what + ": dtype " + ref::dtype_tag(actual.dtype()) + ", wanted " + ref::dtype_tag(dtype));
  const Array got = ref::from_tensor(actual);
  if (got.shape != expected.shape)
    fail(what + ": shape " + ref::shape_str(got.shape) + ", wanted " + ref::shape_str(expected.shape));
  const ref::Tol tol = ref::tol_for(dtype);
  for (int64_t i = 0; i < got.numel(); ++i)
    if (!ref::close(got.data[i], ref::round_to(expected.data[i], dtype), tol))
      fail(what + ": element " + std::to_string(i) + " is " + std::to_string(got.data[i]) + ", wanted " +
           std::to_string(expected.data[i]));
}

// Runs `call`; false when it raised an fg::Error (anything else escapes and is a finding).
template <typename F>
bool runs(F&& call) {
  try {
    call();
    return true;
  } catch (const fg::Error&) {
    return false;
  }
}

void fuzz_unary(FuzzedDataProvider& in, ref::Rng& rng) {
  const auto& ops = opdb::unary_ops();
  const opdb::UnaryOp& op = ops[in.ConsumeIntegralInRange<size_t>(0, ops.size() - 1)];
  const fg::ScalarType dtype = in.PickValueInArray(kDtypes);
  const ref::Input x = draw_input(in, rng, draw_shape(in), dtype, op.domain, false);
  const Array expected = ref::map(ref::from_tensor(x.view), op.ref);
  const bool keeps_int = dtype != fg::kLong || op.int_policy == opdb::IntPolicy::KeepInt;
  const fg::ScalarType result = keeps_int ? dtype : fg::kFloat;
  fg::Tensor y;
  if (!runs([&] { y = op.fn(x.view); })) fail("fg::" + op.name + " raised on a valid input");
  expect_values(y, expected, result, "fg::" + op.name);
}

fg::ScalarType promoted(fg::ScalarType a, fg::ScalarType b, const opdb::BinaryOp& op) {
  if (op.compare) return fg::kBool;
  if (a == fg::kDouble || b == fg::kDouble) return fg::kDouble;
  if (a == fg::kFloat || b == fg::kFloat) return fg::kFloat;
  return op.int_stays_int ? fg::kLong : fg::kFloat;
}

void fuzz_binary(FuzzedDataProvider& in, ref::Rng& rng) {
  const auto& ops = opdb::binary_ops();
  const opdb::BinaryOp& op = ops[in.ConsumeIntegralInRange<size_t>(0, ops.size() - 1)];
  const Shape sa = draw_shape(in), sb = broadcast_partner(in, sa);
  // Mixed dtypes only between tensors of one or more dimensions: a 0-dim operand takes part in
  // promotion by category only (torch's rule), which this reference does not model.
  fg::ScalarType da = in.PickValueInArray(kDtypes), db = da;
  if (!sa.empty() && !sb.empty() && in.ConsumeBool()) db = in.PickValueInArray(kDtypes);
  if (op.name == "pow") da = db = fg::kDouble;  // integer powers have their own domain rules
  const bool inplace = in.ConsumeBool() && op.inplace != nullptr;
  const ref::Input a = draw_input(in, rng, sa, da, op.a_dom, inplace);
  const ref::Input b = draw_input(in, rng, sb, db, op.b_dom, false);
  const std::optional<Shape> shape = ref::try_broadcast(sa, sb);
  const fg::ScalarType result = promoted(da, db, op);
  const std::string what = "fg::" + op.name + "(" + ref::shape_str(sa) + " " + ref::dtype_tag(da) + ", " +
                           ref::shape_str(sb) + " " + ref::dtype_tag(db) + ")";
  const Array before = ref::from_tensor(a.view);
  const Array expected = shape ? ref::map(before, ref::from_tensor(b.view), op.ref) : Array();
  if (!inplace) {
    fg::Tensor y;
    const bool ok = runs([&] { y = op.fn(a.view, b.view); });
    if (ok != shape.has_value()) fail(what + (ok ? " did not raise on shapes that do not broadcast" : " raised"));
    if (ok) expect_values(y, expected, result, what);
    return;
  }
  // In place: the result must fit a's shape, and its dtype cast to a's (torch: no float into an
  // integer tensor; a comparison's bool casts to anything).
  const bool fits = shape && *shape == sa && (op.compare || da != fg::kLong || result == fg::kLong);
  const bool ok = runs([&] { op.inplace(a.view, b.view); });
  if (ok != fits) fail(what + (ok ? "_ in place did not raise" : "_ in place raised"));
  if (ok) expect_values(a.view, expected, da, what + "_");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  ref::Rng rng(in.ConsumeIntegral<uint64_t>());
  if (in.ConsumeBool()) fuzz_unary(in, rng);
  else fuzz_binary(in, rng);
  return 0;
}
