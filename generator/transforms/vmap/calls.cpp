// Calls of functions inside a batched body: the user's helpers, batched once per pattern of
// argument levels, and vmaps of functions that transforms made (a jacobian's rows inside another
// derivative), each a helper at one more level.
#include "ir/cxx_text.h"
#include "transforms/vmap/batcher.h"

#include <clang/AST/DeclCXX.h>

namespace funcgen::vmap {

using ir::ExprKind;

namespace {
std::vector<ExprPtr> clones(const std::vector<ExprPtr>& items) {
  std::vector<ExprPtr> out;
  for (const auto& x : items) out.push_back(ir::clone(*x));
  return out;
}
}  // namespace

// A user function called with batched arguments: its batched version, made once per pattern.
Val ExprBatcher::specialize(const Expr& e, std::vector<Val> args) {
  const Levels l = an_.of(e);
  const BatchingAnalysis* callee = an_.callee(e);
  std::vector<Levels> key;
  std::vector<ExprPtr> a;
  for (auto& v : args) {
    key.push_back(v.levels);
    a.push_back(std::move(v.e));
  }
  for (int k = 0; k < ctx_.nlevels; ++k) a.push_back(batch_size(k));
  if (callee == nullptr) return {rebuild(e, std::move(a)), l};
  std::string name;
  if (auto it = ctx_.specializations.find({&callee->function(), key}); it != ctx_.specializations.end()) {
    name = it->second;
  } else {
    // An operator function (operator*) has no name that can be extended: a functor's operator() is
    // named after its class (Linear_call), the others user_operator.
    const std::string& own = callee->function().name;
    std::string stem = cxx::is_identifier(own) ? own : "user_operator";
    if (const auto* m = llvm::dyn_cast_or_null<clang::CXXMethodDecl>(e.callee);
        m != nullptr && m->getOverloadedOperator() == clang::OO_Call && cxx::is_identifier(m->getParent()->getNameAsString()))
      stem = m->getParent()->getNameAsString() + "_call";
    const std::string base = stem + "__" + ctx_.spec_name;
    name = base;
    for (int i = 1; ctx_.helper_names.count(name) != 0; ++i) name = base + std::to_string(i);
    ctx_.helper_names.insert(name);
    ctx_.specializations[{&callee->function(), key}] = name;
    Batcher inner(*callee, ctx_, key, true);
    std::unique_ptr<ir::Function> fn = inner.run(name);
    ctx_.program->helpers.push_back({std::move(fn), own + " batched as its call in " + fn_.name + " needs.", true});
  }
  ExprPtr x = call_named(name, std::move(a), e.type);
  return {std::move(x), l};
}

// The helper that runs the function a vmapped call maps, at one more level than this body has.
std::string ExprBatcher::vmapped_helper(const Expr& e, const std::vector<Levels>& key) {
  const ir::Function& g = *e.vmapped;
  if (auto found = ctx_.vmapped.find({&g, key}); found != ctx_.vmapped.end()) return found->second;
  const int k = ctx_.nlevels;
  std::string name = ctx_.spec_name + "__" + e.op;
  for (int i = 1; ctx_.helper_names.count(name) != 0; ++i) name = ctx_.spec_name + "__" + e.op + std::to_string(i);
  ctx_.helper_names.insert(name);
  ctx_.vmapped[{&g, key}] = name;
  Context nested;
  nested.spec_name = ctx_.spec_name;
  nested.nlevels = k + 1;
  nested.reporter = ctx_.reporter;
  nested.program = ctx_.program;
  nested.helper_names = ctx_.helper_names;
  Batcher emitter(*an_.callee(e), nested, key, false);
  std::unique_ptr<ir::Function> fn = emitter.run(name);
  ctx_.helper_names = nested.helper_names;
  ctx_.program->helpers.push_back({std::move(fn),
                                   e.op + ": the function that " + fn_.name + " vmaps, on batched values (level " +
                                       std::to_string(k) + " is the vmap's).",
                                   true});
  return name;
}

// The helper's output `index` with this level's batch dim, for the examples of `size`.
ExprPtr ExprBatcher::vmapped_output(const Expr& e, const std::string& name, const std::vector<ExprPtr>& args, ExprPtr size,
                                Levels got, Levels want) {
  const ir::Function& g = *e.vmapped;
  const int k = ctx_.nlevels;
  std::vector<ExprPtr> all = clones(args);
  all.push_back(ir::clone(*size));
  ExprPtr r = call_named(name, std::move(all), g.return_type);
  if (g.outputs > 1 || g.return_type == ir::Type::TensorTuple) r = ir::get(std::move(r), e.index);
  r->levels = got;
  if (got == want) return r;
  std::vector<ExprPtr> sizes;
  for (int m = 0; m < k; ++m)
    if (want & (1u << m)) sizes.push_back(batch_size(m));
  sizes.push_back(std::move(size));
  ExprPtr x = runtime("vmap::materialize", exprs(std::move(r), mask(got), mask(want), braced(std::move(sizes))));
  x->levels = want;
  return x;
}

// vmap(g, in_dims, out_dim)(args) inside the body: g runs as a helper at one more level than this
// body has (its batch dim after the outer ones: the arguments' in_dims move there), and the
// output's batch dim moves to out_dim.
Val ExprBatcher::vmapped(const Expr& e, std::vector<Val> args) {
  const BatchingAnalysis* inner = an_.callee(e);
  const ir::Function& g = *e.vmapped;
  const int k = ctx_.nlevels;
  const Levels level = 1u << k;
  std::vector<ExprPtr> a, mapped;
  std::vector<Levels> key;
  std::vector<int> moved_of(args.size(), -1);
  for (size_t i = 0; i < args.size(); ++i) {
    const bool tensor = e.args[i]->type == ir::Type::Tensor;
    if (e.args[i]->type == ir::Type::TensorList && i < e.in_dims.size() && e.in_dims[i]) {
      ctx_.reporter->report("unsupported", e.range.getBegin(),
                            "a vmap inside a transform cannot map the vector '" +
                                (i < g.params.size() ? g.var(g.params[i]).name : std::string("arg")) +
                                "' yet (it is read at run-time indices); give it in_dims None there, or make this "
                                "vmap the outermost transform");
      return {text("fg::Tensor()", ir::Type::Tensor), 0};
    }
    const Levels have = tensor ? args[i].levels : 0;
    if (!tensor || i >= e.in_dims.size() || !e.in_dims[i]) {
      a.push_back(std::move(args[i].e));
      key.push_back(have);
      continue;
    }
    const std::string pname = i < g.params.size() ? g.var(g.params[i]).name : "arg";
    const int moved = local(pname + "_in", "const fg::Tensor");
    declare(moved, runtime("vmap::move_in", exprs(std::move(args[i].e), literal(*e.in_dims[i]), literal(nbatch(have)),
                                                  quoted(e.op), quoted(pname))));
    ExprPtr item = text("{\"" + pname + "\", &" + out_->var(moved).name + ", " + std::to_string(nbatch(have)) + "}");
    item->reads = {moved};
    mapped.push_back(std::move(item));
    a.push_back(ref(moved));
    moved_of[i] = moved;
    key.push_back(have | level);
  }
  if (inner == nullptr || mapped.empty()) {
    ctx_.reporter->report("unsupported", e.range.getBegin(), "internal error: a vmap of '" + e.op + "' without mapped arguments");
    return {text("fg::Tensor()", ir::Type::Tensor), 0};
  }
  const int batch = local(batch_name(k), "const int64_t", ir::Type::Int);
  declare(batch, runtime("vmap::batch_size", exprs(quoted(e.op), braced(std::move(mapped))), ir::Type::Int));
  const std::string name = vmapped_helper(e, key);
  for (int m = 0; m < k; ++m) a.push_back(batch_size(m));
  const Levels got = inner->outputs()[static_cast<size_t>(e.index)];
  // out_dims=None: the result, the same for every example, without this level's batch dim.
  if (!e.out_dim && (got & level) != 0) {
    ctx_.reporter->report("spec", e.range.getBegin(), batched_out_dims_none(static_cast<size_t>(e.index), g.name));
    return {text("fg::Tensor()", ir::Type::Tensor), 0};
  }
  const Levels want = e.out_dim ? got | level : got;
  if (!e.out_dim) return {vmapped_output(e, name, a, ref(batch), got, want), got};
  ExprPtr o;
  if (!e.chunk_size) {
    o = vmapped_output(e, name, a, ref(batch), got, want);
  } else {  // chunk_size: the helper runs on slices of the mapped arguments, concatenated
    const int chunk = ir::add_var(*out_, "chunk__", ir::Type::TensorList, "const std::vector<fg::Tensor>&");
    std::vector<ExprPtr> pairs;
    std::vector<ExprPtr> sliced = clones(a);
    std::string first;
    for (size_t i = 0, c = 0; i < args.size(); ++i) {
      if (moved_of[i] < 0) continue;
      const std::string dim = std::to_string(nbatch(args[i].levels));
      pairs.push_back(braced(exprs(ref(moved_of[i]), text(dim, ir::Type::Int))));
      const std::string slice = "chunk__[" + std::to_string(c++) + "]";
      sliced[i] = text(slice, ir::Type::Tensor);
      sliced[i]->reads = {chunk};
      if (first.empty()) first = slice + ".size(" + dim + ")";
    }
    const int rows = local(e.op + "_chunks", "const std::vector<fg::Tensor>", ir::Type::TensorList);
    const int size = local("chunk" + std::to_string(k), "const int64_t", ir::Type::Int);
    std::vector<StmtPtr> body;
    body.push_back(ir::decl(size, text(first, ir::Type::Int)));
    body.push_back(ir::ret(braced(exprs(vmapped_output(e, name, sliced, ref(size), got, want)), ir::Type::TensorList)));
    pre_.push_back(comment("chunk_size=" + std::to_string(*e.chunk_size) + ": " + e.op +
                           " runs on at most that many examples at a time"));
    declare(rows, runtime("vmap::chunked",
                          exprs(literal(*e.chunk_size), ref(batch), braced(std::move(pairs)),
                                braced(exprs(literal(nbatch(want & (level - 1))))),
                                lambda("[&](const std::vector<fg::Tensor>& chunk__) -> std::vector<fg::Tensor>",
                                       std::move(body), false, ir::Type::TensorList)),
                          ir::Type::TensorList));
    o = subscript(ref(rows), 0);
  }
  ExprPtr x = runtime("vmap::move_out", exprs(std::move(o), literal(nbatch(want & (level - 1))), literal(*e.out_dim), quoted(e.op)));
  return {std::move(x), want & ~level};
}

}  // namespace funcgen::vmap
