// Checks a transform tree against the signatures of the functions it applies to.
#include "spec.h"

namespace funcgen::spec {
namespace {

[[noreturn]] void error(size_t offset, std::string message,
                        std::vector<std::pair<size_t, std::string>> notes = {}) {
  throw ParseError(Diagnostic{offset, std::move(message), std::move(notes), std::nullopt});
}

std::string describe(const Param& p) {
  return "argument '" + p.name + "' (" + (p.type_spelling.empty() ? "a scalar" : p.type_spelling) + ")";
}

// Resolves the argnums of grad-like transforms to parameter indices, checking each names a tensor.
std::vector<size_t> resolve_argnums(const Transform& t, const FunctionInfo& f) {
  std::vector<size_t> out;
  const auto n = static_cast<int64_t>(f.params.size());
  for (size_t k = 0; k < t.argnums.argnums.size(); ++k) {
    const int64_t a = t.argnums.argnums[k];
    const size_t at = t.argnums.item_offsets.empty() ? t.offset : t.argnums.item_offsets[k];
    if (a < -n || a >= n)
      error(at, "argnums " + std::to_string(a) + " is out of range: '" + f.name + "' takes " +
                    std::to_string(n) + " argument" + (n == 1 ? "" : "s"));
    const auto idx = static_cast<size_t>(a < 0 ? a + n : a);
    if (!f.params[idx].is_tensor)
      error(at, "argnums " + std::to_string(a) + " selects " + describe(f.params[idx]) + " of '" + f.name +
                    "', which cannot be differentiated; only fg::Tensor arguments can");
    out.push_back(idx);
  }
  return out;
}

void check_scalar_output(const Transform& t, const FunctionInfo& f) {
  const size_t primary = t.has_aux ? f.outputs - 1 : f.outputs;
  if (t.has_aux && (!f.returns_tuple || f.outputs < 2))
    error(t.offset, std::string(name_of(t.kind)) + "(..., has_aux=True) needs '" + f.name +
                        "' to return std::tuple<fg::Tensor, aux...>");
  if (primary != 1)
    error(t.offset, std::string(name_of(t.kind)) + " needs '" + f.name +
                        "' to return one tensor with a single element, but it returns " +
                        std::to_string(f.outputs) + " values" + (t.has_aux ? "" : "; return the aux values with has_aux=True"));
}

FunctionInfo check(const Transform& t, const FunctionLookup& lookup) {
  if (t.kind == TransformKind::Function) {
    const FunctionInfo* f = lookup(t.function);
    if (f == nullptr)
      error(t.offset, "unknown function '" + t.function +
                          "'; name the annotated function or a spec defined earlier in this file");
    return *f;
  }
  const FunctionInfo f = check(*t.inner, lookup);
  if (f.returns_callable)
    error(t.offset, std::string(name_of(t.kind)) + " cannot transform '" + f.name +
                        "', which returns a function (as vjp and linearize do); transform the original function instead");
  FunctionInfo r = f;
  r.name = std::string(name_of(t.kind)) + "(" + f.name + ")";
  switch (t.kind) {
    case TransformKind::Function: break;
    case TransformKind::Vmap: {
      const auto& in = t.in_dims;
      if (in.per_item && in.dims.size() != f.params.size())
        error(in.offset, "in_dims has " + std::to_string(in.dims.size()) + " entr" +
                             (in.dims.size() == 1 ? "y" : "ies") + " but '" + f.name + "' takes " +
                             std::to_string(f.params.size()) + " argument" + (f.params.size() == 1 ? "" : "s"),
              {{in.offset, "give one int or None per argument, None for arguments that are not mapped"}});
      bool any_mapped = false;
      for (size_t i = 0; i < f.params.size(); ++i) {
        const Dim d = in.per_item ? in.dims[i] : in.dims[0];
        if (in.per_item && in.trees[i].is_tuple && !f.params[i].structured)
          error(in.item_offsets[i], "in_dims entry " + std::to_string(i) + " is a tuple, but " + describe(f.params[i]) +
                                        " of '" + f.name + "' is not a structure; give an int or None");
        if (!d) continue;
        if (!f.params[i].is_tensor) {
          if (!in.per_item) continue;  // a single in_dims applies to the tensor arguments only
          error(in.item_offsets[i], "in_dims entry " + std::to_string(i) + " maps " + describe(f.params[i]) +
                                        " of '" + f.name + "', which is not a tensor; use None");
        }
        any_mapped = true;
      }
      if (!any_mapped)
        error(in.offset, "vmap needs at least one mapped tensor argument, but in_dims maps none of '" + f.name + "'");
      if (t.out_dims.per_item && t.out_dims.dims.size() != f.outputs)
        error(t.out_dims.offset, "out_dims has " + std::to_string(t.out_dims.dims.size()) + " entries but '" +
                                     f.name + "' returns " + std::to_string(f.outputs) + " value" +
                                     (f.outputs == 1 ? "" : "s"));
      break;
    }
    case TransformKind::Grad:
    case TransformKind::GradAndValue: {
      check_scalar_output(t, f);
      const auto idx = resolve_argnums(t, f);
      const size_t grads = t.argnums.is_tuple ? idx.size() : 1;
      // grad: grads [+ aux]; grad_and_value: (grads, value [+ aux]) as two top-level values.
      r.outputs = t.kind == TransformKind::Grad ? (t.has_aux ? 2 : (t.argnums.is_tuple ? grads : 1)) : 2;
      r.returns_tuple = r.outputs > 1 || t.argnums.is_tuple;
      break;
    }
    case TransformKind::Vjp:
      r.returns_callable = true;
      r.returns_tuple = true;
      r.outputs = t.has_aux ? 3 : 2;
      break;
    case TransformKind::Linearize:
      r.returns_callable = true;
      r.returns_tuple = true;
      r.outputs = 2;
      break;
    case TransformKind::Jvp: {
      // jvp(f)(primals..., tangents...): a tangent for every tensor primal.
      for (const Param& p : f.params)
        if (p.is_tensor) r.params.push_back(Param{"tangent_" + p.name, true, p.type_spelling, p.structured});
      r.outputs = t.has_aux ? 3 : 2;
      r.returns_tuple = true;
      break;
    }
    case TransformKind::Jacrev:
    case TransformKind::Jacfwd:
    case TransformKind::Hessian: {
      if (t.has_aux && (!f.returns_tuple || f.outputs < 2))
        error(t.offset, std::string(name_of(t.kind)) + "(..., has_aux=True) needs '" + f.name +
                            "' to return std::tuple<fg::Tensor, aux...>");
      const auto idx = resolve_argnums(t, f);
      const size_t primary = t.has_aux ? f.outputs - 1 : f.outputs;
      if (t.kind == TransformKind::Hessian && primary != 1)
        error(t.offset, "hessian needs '" + f.name + "' to return one tensor, but it returns " +
                            std::to_string(f.outputs) + " values");
      const size_t jacobians = f.returns_tuple && primary > 1 ? primary : (t.argnums.is_tuple ? idx.size() : 1);
      r.outputs = jacobians + (t.has_aux ? 1 : 0);
      r.returns_tuple = r.outputs > 1 || t.argnums.is_tuple;
      break;
    }
  }
  return r;
}

}  // namespace

FunctionInfo check_transform(const Transform& transform, const FunctionLookup& lookup) {
  return check(transform, lookup);
}

}  // namespace funcgen::spec
