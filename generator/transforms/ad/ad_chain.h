// The part of the differentiation specs that is IR to IR: a link of a spec's chain (grad, jvp,
// vmap, jacrev, jacfwd, hessian) applied to the IR of what it wraps, so such links nest freely.
// ad_transforms.cpp derives from it the emission of the links that return callables or wrap
// their basis (vjp, linearize, and jacrev/jacfwd at the head of a chain).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "transforms/ad/ad_transforms.h"

namespace funcgen::ad {

// An IR function, owned or the lowering's (ir::Module).
struct Ir {
  std::unique_ptr<ir::Function> owned;
  const ir::Function* fn = nullptr;
};

// References to `ids` in fn: one value, or a tuple (always, with as_tuple).
ir::ExprPtr refs(const ir::Function& fn, const std::vector<int>& ids, bool as_tuple);

class AdChain {
 public:
  AdChain(const AnnotatedSpec& spec, const std::vector<SpecLink>& chain, const ir::Module& module, Reporter& reporter,
          const OpResolver& resolver, const Stages& stages)
      : spec_(spec), module_(module), reporter_(reporter), resolver_(resolver), stages_(stages),
        function_(spec.function), links_(chain) {}

 protected:
  using Link = SpecLink;
  using Expr = ir::Expr;
  using ExprPtr = ir::ExprPtr;
  using TransformKind = spec::TransformKind;

  void unsupported(const Link& l, const std::string& message);

  // Jacobians w.r.t. a list parameter (a std::vector<fg::Tensor> read at run-time indices): jacrev
  // and the outermost jacfwd take them (one jacobian per element, a vector); hessian would
  // differentiate the list's gradient again, and a jacfwd inside another transform would map the
  // list of basis tangents in a vmap inside a transform, neither of which is generated yet.
  bool no_list_wrt(const Link& l, const ir::Function& n, TransformKind kind, bool nested);

  static bool list_wrt(const ir::Function& n, int a);
  static ir::Type output_type(const ir::Function& g, int k);

  std::string description(size_t i) const;

  // ---------------------------------------------------------------- IR transforms

  std::unique_ptr<ir::Function> normalized(size_t i, const char* what);

  // The IR of links_[i] applied to what is inside it.
  Ir ir_of(size_t i);

  // Each derivative transform multiplies the code it is given (nesting grows it geometrically:
  // jvp 20 deep is millions of statements), so the size is bounded where it is made, with an
  // error at the transform instead of a generator that runs for minutes and code that does not
  // compile in reasonable time.
  bool too_large(const ir::Function& fn, const Link& l);

  static size_t statements(const ir::Function& fn);

  std::vector<int> argnums(const spec::Transform& t, const ir::Function& fn) const;

  // The tensors and vectors of tensors (list parameters) among fn's parameters.
  std::vector<int> differentiable_params(const ir::Function& fn) const;

  bool enough_outputs(const Link& l, const std::vector<const Expr*>& outs);

  ExprPtr aux_of(const ir::Function& fn, const std::vector<int>& outs);

  std::unique_ptr<ir::Function> grad(size_t i);

  std::unique_ptr<ir::Function> jvp(size_t i);

  // ------------------------------------------------ transforms that vmap, as IR (for nesting)

  // A new local of `fn` named `base` (made unique).
  static int local(ir::Function& fn, const std::string& base, ir::Type type = ir::Type::Tensor,
                   const std::string& cxx_type = "fg::Tensor");

  // `name = formula` in fn, the formula's names bound to fn's values.
  int define(ir::Function& fn, const std::string& name, const std::string& formula,
             const std::map<std::string, int>& values);

  static ir::Randomness randomness_of(const spec::Transform& t);

  // vmap(g, in_dims, out_dim)(fn's parameters, extra), output `output`, as `name`.
  int define_vmapped(ir::Function& fn, const std::string& name, std::shared_ptr<const ir::Function> g,
                     const std::vector<int>& extra, int64_t out_dim, int output, const std::string& label,
                     std::optional<int64_t> chunk_size = std::nullopt,
                     ir::Randomness randomness = ir::Randomness::Error);

  // What jacrev_ir and jacfwd_ir start from: fn normalized, a copy of it without its return (to
  // extend), its outputs, how many are differentiated (the others are aux), the argnums.
  struct JacobianFrame {
    std::unique_ptr<ir::Function> n, j;
    std::vector<const Expr*> outs;
    size_t differentiated = 0;
    std::vector<int> wrt;
  };
  std::optional<JacobianFrame> jacobian_frame(const ir::Function& fn, const Link& l);

  // The result of a jacobian: per differentiated output, one jacobian per argnum (a tuple when the
  // argnums are a tuple), a tuple over several outputs, and the aux values after it (has_aux).
  ExprPtr jacobian_result(const JacobianFrame& frame, const Link& l, const std::vector<std::vector<int>>& jacs);

  // jacrev(fn) as IR: fn's outputs, then for each one the vjp of fn vmapped over the standard basis
  // of its cotangents (rows [n, in...]), unflattened to [out..., in...].
  std::unique_ptr<ir::Function> jacrev_ir(const ir::Function& fn, const Link& l);

  // jacfwd(fn) as IR: for each argnum, the jvp of fn vmapped over the standard basis of its
  // tangents (columns [out..., n] of every output), unflattened to [out..., in...].
  std::unique_ptr<ir::Function> jacfwd_ir(const ir::Function& fn, const Link& l);

  // vmap(inner) as IR: each output of the inner function, vmapped.
  std::unique_ptr<ir::Function> vmap_ir(size_t i);

  const AnnotatedSpec& spec_;
  const ir::Module& module_;
  Reporter& reporter_;
  const OpResolver& resolver_;
  const Stages& stages_;
  const clang::FunctionDecl* function_ = nullptr;
  const std::vector<Link>& links_;
};

}  // namespace funcgen::ad
