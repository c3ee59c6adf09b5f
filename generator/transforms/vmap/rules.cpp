// Expressions, and each op's call as its batching rule (templates/batching_rules.def) makes it.
#include <clang/AST/ExprCXX.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "ir/cxx_text.h"
#include "ir/types.h"
#include "ops/registry.h"
#include "transforms/vmap/batcher.h"

namespace funcgen::vmap {

using ir::ExprKind;

namespace {

std::optional<int64_t> int_literal(const std::string& s) {
  std::string t;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) t += c;
  if (t.empty()) return std::nullopt;
  size_t i = t[0] == '-' ? 1 : 0;
  if (i == t.size()) return std::nullopt;
  for (size_t k = i; k < t.size(); ++k)
    if (!std::isdigit(static_cast<unsigned char>(t[k]))) return std::nullopt;
  return std::stoll(t);
}

std::optional<int64_t> int_literal(const Expr& e) {
  return e.kind == ExprKind::Opaque ? int_literal(e.text) : std::nullopt;
}

// A logical dim as a physical one, computed here when it is a literal.
ExprPtr shift_dim(ExprPtr dim, int nb) {
  if (nb == 0) return dim;
  if (auto v = int_literal(*dim)) return literal(*v >= 0 ? *v + nb : *v);
  return runtime("vmap::dim", exprs(std::move(dim), literal(nb)), ir::Type::Int);
}

ExprPtr shift_dims(ExprPtr dims, int nb) {
  if (nb == 0) return dims;
  if (dims->kind == ExprKind::List &&
      std::all_of(dims->args.begin(), dims->args.end(), [](const ExprPtr& d) { return int_literal(*d).has_value(); })) {
    for (auto& d : dims->args) d = shift_dim(std::move(d), nb);
    return dims;
  }
  // {0, -1} written out as text: shift each.
  const std::string& t = dims->text;
  if (dims->kind == ExprKind::Opaque && t.size() >= 2 && t.front() == '{' && t.back() == '}') {
    std::stringstream in(t.substr(1, t.size() - 2));
    std::vector<ExprPtr> items;
    std::string item;
    bool all_literal = true;
    while (std::getline(in, item, ',')) {
      all_literal &= int_literal(item).has_value();
      items.push_back(text(item, ir::Type::Int));
    }
    if (all_literal) {
      for (auto& d : items) d = shift_dim(std::move(d), nb);
      return braced(std::move(items), ir::Type::IntList);
    }
  }
  if (int_literal(*dims)) return shift_dim(std::move(dims), nb);
  return runtime("vmap::dims", exprs(std::move(dims), literal(nb)), ir::Type::IntList);
}

std::vector<ExprPtr> values(std::vector<Val>& args) {
  std::vector<ExprPtr> out;
  for (auto& a : args) out.push_back(std::move(a.e));
  return out;
}

// How many tensors an unseen call returns: 0 for void, N for a std::tuple or std::pair of N
// fg::Tensor; nullopt for anything else.
std::optional<size_t> tensor_outputs(const Expr& e) {
  if (e.ast == nullptr) return std::nullopt;
  const clang::QualType t = e.ast->getType().getCanonicalType();
  if (t->isVoidType()) return 0;
  const auto* spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(t->getAsCXXRecordDecl());
  if (spec == nullptr) return std::nullopt;
  const std::string name = spec->getQualifiedNameAsString();
  std::vector<clang::QualType> items;
  for (const clang::TemplateArgument& a : spec->getTemplateArgs().asArray()) {
    if (a.getKind() == clang::TemplateArgument::Type) items.push_back(a.getAsType());
    if (a.getKind() == clang::TemplateArgument::Pack)
      for (const clang::TemplateArgument& p : a.pack_elements()) items.push_back(p.getAsType());
  }
  if (name != "std::tuple" && name != "std::pair") return std::nullopt;
  for (const clang::QualType& item : items)
    if (!is_fg_tensor(item)) return std::nullopt;
  return items.size();
}

}  // namespace

// The node `e` with `args` in place of its operands, at the levels the analysis gives it.
ExprPtr ExprBatcher::rebuild(const Expr& e, std::vector<ExprPtr> args) const {
  ExprPtr x = ir::copy_node(e);
  x->args = std::move(args);
  x->levels = an_.of(e);
  return x;
}

// Every node of batched IR carries the levels of its value.
Val ExprBatcher::expr(const Expr& e) {
  Val v = expr_of(e);
  v.e->levels = v.levels;
  return v;
}

Val ExprBatcher::expr_of(const Expr& e) {
  const Levels l = an_.of(e);
  std::vector<ExprPtr> args;
  switch (e.kind) {
    case ExprKind::Call:
      return call(e);
    case ExprKind::Conditional:
      if (an_.vmap().select && e.type == ir::Type::Tensor && an_.of(e.arg(0)) != 0) return select_conditional(e);
      // Both arms give the value at the levels of the whole (one may be batched, the other not).
      args.push_back(expr(e.arg(0)).e);
      for (size_t i = 1; i < 3; ++i)
        args.push_back(scoped([&] {
          Val c = expr(e.arg(i));
          return e.arg(i).type == ir::Type::Tensor ? coerce(std::move(c), l) : std::move(c.e);
        }));
      return {rebuild(e, std::move(args)), l};
    case ExprKind::Binary:
      args.push_back(expr(e.arg(0)).e);
      // && and || evaluate their right side only sometimes: keep its statements inside it.
      if (e.text == "&&" || e.text == "||") args.push_back(scoped([&] { return expr(e.arg(1)).e; }));
      else args.push_back(expr(e.arg(1)).e);
      return {rebuild(e, std::move(args)), l};
    case ExprKind::Tuple: {
      // A tuple is batched as a whole (std::get and structured bindings take its levels): every
      // tensor in it is expanded to them. std::tie binds variables and is left as it is.
      const auto* c = llvm::dyn_cast_or_null<clang::CallExpr>(e.ast);
      const bool tie = c != nullptr && c->getDirectCallee() != nullptr &&
                       c->getDirectCallee()->getQualifiedNameAsString() == "std::tie";
      for (const auto& a : e.args) {
        Val v = expr(*a);
        args.push_back(!tie && a->type == ir::Type::Tensor ? coerce(std::move(v), l) : std::move(v.e));
      }
      return {rebuild(e, std::move(args)), l};
    }
    default:  // variables, text, unary operators, casts, lists, std::get
      for (const auto& a : e.args) args.push_back(expr(*a).e);
      return {rebuild(e, std::move(args)), l};
  }
}

Val ExprBatcher::call(const Expr& e) {
  const Levels l = an_.of(e);
  std::vector<Val> args;
  for (const auto& a : e.args) args.push_back(expr(*a));
  Levels tensors = 0;
  for (size_t i = 0; i < args.size(); ++i)
    if (ir::is_tensor_like(e.args[i]->type)) tensors |= args[i].levels;
  if (e.form == ir::CallForm::Vmapped) return vmapped(e, std::move(args));
  if (e.form == ir::CallForm::User) {
    if (tensors == 0 && !ir::passes_lambda(e)) return {rebuild(e, values(args)), l};
    return specialize(e, std::move(args));
  }
  // A list parameter's gradient: its elements at the levels of the whole (zeros for those that
  // got no gradient are batched like the parameter).
  if (e.form == ir::CallForm::External && e.op == ir::kListGradient && l != 0)
    return {runtime("vmap::list_gradient", exprs(std::move(args[0].e), mask(args[0].levels), std::move(args[1].e),
                                                 mask(args[1].levels), mask(l), batch_sizes_of(l)),
                    ir::Type::TensorList),
            l};
  // v[i] on a std::vector of tensors: its elements are stored at the vector's levels.
  if (ir::is_element(e))
    return {rebuild(e, values(args)), l};
  const OpRule rule = e.form == ir::CallForm::External ? OpRule{} : find_rule(e.op);
  if (tensors == 0 && rule.rule != BatchRule::Random) return {rebuild(e, values(args)), l};
  const int nb = e.args.empty() ? 0 : nbatch(args[0].levels);

  switch (rule.rule) {
    case BatchRule::Pointwise:
      return pointwise(e, std::move(args));
    case BatchRule::Reduce:
      // max(self, other) and min(self, other) are element-wise.
      for (size_t i = 1; i < e.args.size(); ++i)
        if (e.args[i]->type == ir::Type::Tensor) return pointwise(e, std::move(args));
      return reduce(e, std::move(args), nb);
    case BatchRule::Dims:
      return dims(e, rule, std::move(args), nb);
    case BatchRule::Size: {
      ExprPtr self = bind(std::move(args[0]), "self");
      args[1].e = runtime("vmap::batch_shape", exprs(ir::clone(*self), literal(nb), std::move(args[1].e)), ir::Type::IntList);
      args[0].e = std::move(self);
      return {rebuild(e, values(args)), l};
    }
    case BatchRule::Helper:
      return helper(e, std::move(args), nb);
    case BatchRule::Factory:
    case BatchRule::Like:
    case BatchRule::Meta:
    case BatchRule::Item:
    case BatchRule::Dynamic:
    case BatchRule::Out:
      return {rebuild(e, values(args)), l};
    case BatchRule::Random:
      return random(e, std::move(args));
    case BatchRule::Query:
      return query(e, std::move(args), nb);
    case BatchRule::None:
      break;
  }
  if (e.form == ir::CallForm::External && e.text.empty()) return unseen(e, std::move(args));  // a function, not an operator
  if (e.type != ir::Type::Tensor) return {rebuild(e, values(args)), l};  // side effects: diagnosed by the checks
  if (ops::info(e).inplace_form()) {
    // A loop of per-example calls would write into slices of copies, not into the tensor.
    ctx_.reporter->report("unsupported", e.range.getBegin(),
                          "in-place '" + e.op + "' has no batching rule, and the per-example fallback cannot write "
                          "in place; use its out-of-place form")
        << e.range;
    return {rebuild(e, values(args)), l};
  }
  return fallback(e, std::move(args));
}

Val ExprBatcher::pointwise(const Expr& e, std::vector<Val> args) {
  std::vector<size_t> operands;
  for (size_t i = 0; i < args.size(); ++i)
    if (e.args[i]->type == ir::Type::Tensor) operands.push_back(i);
  if (operands.size() >= 2) {
    std::vector<ExprPtr> bound;
    std::vector<Levels> levels;
    std::string key;
    for (size_t i : operands) {
      levels.push_back(args[i].levels);
      bound.push_back(bind(std::move(args[i])));
      const Expr& b = *bound.back();
      key += (b.kind == ExprKind::VarRef ? "v" + std::to_string(b.var) : "t" + b.text) + "@" + std::to_string(levels.back()) + ",";
    }
    const auto same = [&](size_t k) {
      return bound[k]->kind == bound[0]->kind && bound[k]->var == bound[0]->var && bound[k]->text == bound[0]->text &&
             levels[k] == levels[0];
    };
    bool all_same = true;
    for (size_t k = 1; k < bound.size(); ++k) all_same &= same(k);
    if (!all_same) {
      // Operands already aligned for this statement are aligned once.
      std::vector<int>& names = aligned_[key];
      if (names.empty()) {
        std::vector<ExprPtr> items;
        for (size_t k = 0; k < bound.size(); ++k) {
          const std::string base = bound[k]->kind == ExprKind::VarRef ? out_->var(bound[k]->var).name : "t";
          names.push_back(local(base + "_b", "auto"));
          items.push_back(batched(ir::clone(*bound[k]), levels[k]));
        }
        auto align = std::make_unique<Stmt>();
        align->kind = ir::StmtKind::Bind;
        align->text = "auto";
        align->vars = names;
        align->expr = runtime("vmap::align", exprs(braced(std::move(items))), ir::Type::TensorTuple);
        pre_.push_back(std::move(align));
      }
      for (size_t k = 0; k < operands.size(); ++k) bound[k] = ref(names[k]);
    }
    // The same operand twice (x * x) lines up with itself.
    for (size_t k = 0; k < operands.size(); ++k) args[operands[k]].e = std::move(bound[k]);
  }
  return {rebuild(e, values(args)), an_.of(e)};
}

Val ExprBatcher::reduce(const Expr& e, std::vector<Val> args, int nb) {
  const Levels l = an_.of(e);
  if (nb == 0) return {rebuild(e, values(args)), l};
  for (size_t i = 1; i < e.args.size(); ++i) {
    if (e.params[i] != "dim") continue;
    if (e.args[i]->type == ir::Type::Int) {
      args[i].e = shift_dim(std::move(args[i].e), nb);
      return {rebuild(e, values(args)), l};
    }
    if (e.args[i]->type == ir::Type::IntList) {
      const Expr& d = *args[i].e;
      const bool listed = (d.kind == ExprKind::List && !d.args.empty()) ||
                          (d.kind == ExprKind::Opaque && d.text.size() > 2 && d.text.front() == '{');
      if (listed) {
        args[i].e = shift_dims(std::move(args[i].e), nb);
      } else {  // {} (or a list empty at run time) reduces every logical dim, not the batch dims
        ExprPtr self = bind(std::move(args[0]), "self");
        args[i].e = runtime("vmap::reduced_dims", exprs(ir::clone(*self), literal(nb), std::move(args[i].e)),
                            ir::Type::IntList);
        args[0].e = std::move(self);
      }
      return {rebuild(e, values(args)), l};
    }
  }
  // Over every logical dim: flatten them into one and reduce over it.
  ExprPtr flat = runtime("vmap::flatten_logical", exprs(std::move(args[0].e), literal(nb)));
  const auto over = [&] { return braced(exprs(literal(nb)), ir::Type::IntList); };
  const auto with = [&](ExprPtr x) { return Val{std::move(x), l}; };
  const bool has_rest = args.size() > 1;
  const ops::OpId op = ops::id(e);
  if (op == ops::sum || op == ops::mean) {
    std::vector<ExprPtr> a = exprs(std::move(flat), over());
    if (has_rest) {
      a.push_back(text("false", ir::Type::Bool));
      a.push_back(std::move(args[1].e));
    }
    return with(runtime(e.op, std::move(a)));
  }
  if (op == ops::amax || op == ops::max) return with(runtime("amax", exprs(std::move(flat), over())));
  if (op == ops::amin || op == ops::min) return with(runtime("amin", exprs(std::move(flat), over())));
  if (op == ops::argmax || op == ops::argmin) return with(runtime(e.op, exprs(std::move(flat), literal(nb))));
  if (op == ops::norm)
    return with(runtime("norm", exprs(std::move(flat), has_rest ? std::move(args[1].e) : literal(2), over())));
  if (op == ops::var || op == ops::std_)  // var(self, unbiased)
    return with(runtime(e.op, exprs(std::move(flat), over(), has_rest ? std::move(args[1].e) : text("true", ir::Type::Bool))));
  return {rebuild(e, values(args)), l};
}

Val ExprBatcher::dims(const Expr& e, const OpRule& rule, std::vector<Val> args, int nb) {
  const Levels l = an_.of(e);
  if (nb == 0) return {rebuild(e, values(args)), l};
  if (e.form == ir::CallForm::Operator && e.text == "[]") {
    ExprPtr x = ir::clone(e);
    x->kind = ExprKind::Call;
    x->form = ir::CallForm::Method;
    x->op = "select";
    x->text.clear();
    x->args = exprs(std::move(args[0].e), literal(nb), std::move(args[1].e));
    x->levels = l;
    return {std::move(x), l};
  }
  if (ops::id(e) == ops::squeeze && args.size() == 1) {
    ExprPtr x = runtime("vmap::squeeze_logical", exprs(std::move(args[0].e), literal(nb)));
    x->levels = l;
    return {std::move(x), l};
  }
  // Write out every parameter up to the last dim whose default counts from the front.
  size_t last = args.size() - 1;
  for (size_t p = 0; p < rule.params.size(); ++p) {
    const auto& param = rule.params[p];
    const bool given = p + 1 < args.size();
    if (given || (param.is_dim && !param.default_value.empty() && param.default_value[0] != '-')) last = std::max(last, p + 1);
  }
  std::vector<ExprPtr> out;
  out.push_back(std::move(args[0].e));
  for (size_t p = 0; p + 1 <= last && p < rule.params.size(); ++p) {
    const auto& param = rule.params[p];
    ExprPtr v = p + 1 < args.size() ? std::move(args[p + 1].e) : text(param.default_value, ir::Type::Int);
    out.push_back(param.is_dim ? shift_dim(std::move(v), nb) : std::move(v));
  }
  for (size_t p = rule.params.size() + 1; p < args.size(); ++p) out.push_back(std::move(args[p].e));
  return {rebuild(e, std::move(out)), l};
}

// Shape queries answer for the logical tensor.
Val ExprBatcher::query(const Expr& e, std::vector<Val> args, int nb) {
  const Levels l = an_.of(e);
  if (nb == 0) return {rebuild(e, values(args)), l};
  std::vector<ExprPtr> a = exprs(std::move(args[0].e), literal(nb));
  const ops::OpId op = ops::id(e);
  if (op == ops::size) {
    a.push_back(std::move(args[1].e));
    return {runtime("vmap::logical_size", std::move(a), ir::Type::Int), l};
  }
  if (op == ops::dim || op == ops::ndimension) return {runtime("vmap::logical_dim", std::move(a), ir::Type::Int), l};
  if (op == ops::numel) return {runtime("vmap::logical_numel", std::move(a), ir::Type::Int), l};
  return {runtime("vmap::logical_sizes", std::move(a), ir::Type::IntList), l};
}

Val ExprBatcher::helper(const Expr& e, std::vector<Val> args, int nb) {
  const Levels l = an_.of(e);
  const auto done = [&](ExprPtr x) {
    x->levels = l;
    return Val{std::move(x), l};
  };
  const ops::OpId op = ops::id(e);
  if (op == ops::t) return done(runtime("vmap::t", exprs(std::move(args[0].e), literal(nb))));
  if (op == ops::permute || op == ops::expand || op == ops::broadcast_to)
    return done(runtime(op == ops::permute ? "vmap::permute" : "vmap::expand",
                        exprs(std::move(args[0].e), literal(nb), std::move(args[1].e))));
  // A tensor operand as fg::vmap::Batched; {} (an absent optional tensor) as it is.
  const auto b = [&](size_t i) {
    return ir::is_absent(*args[i].e) ? std::move(args[i].e) : batched(std::move(args[i].e), args[i].levels);
  };
  const auto given = [&](size_t i, const std::string& otherwise) {
    return i < args.size() ? std::move(args[i].e) : text(otherwise);
  };
  // A braced list of tensors, each as Batched.
  const auto list = [&](size_t i) {
    std::vector<ExprPtr> items;
    for (auto& item : args[i].e->args) {
      const Levels li = item->levels;
      items.push_back(batched(std::move(item), li));
    }
    return braced(std::move(items));
  };
  std::vector<ExprPtr> a;
  if (const OpRule rule = find_rule(e.op); !rule.params.empty()) {
    // A row that lists the op's parameters: tensors as Batched (absent: {}), the others as given
    // or by default.
    for (size_t p = 0; p < rule.params.size(); ++p) {
      const bool tensor = p < e.param_types.size() && e.param_types[p] == ir::Type::Tensor;
      if (p >= args.size()) {
        a.push_back(text(rule.params[p].default_value.empty() ? "{}" : rule.params[p].default_value));
      } else if (tensor && ir::is_absent(*args[p].e)) {
        a.push_back(braced({}));
      } else if (tensor && e.args[p]->type != ir::Type::Tensor) {
        ctx_.reporter->report("unsupported", e.args[p]->range.getBegin(),
                              "under vmap, '" + e.op + "' takes its '" + rule.params[p].name +
                                  "' as an fg::Tensor or {} for none; pass the tensor itself, not this optional value")
            << e.args[p]->range;
        return {rebuild(e, values(args)), l};
      } else {
        a.push_back(tensor ? b(p) : std::move(args[p].e));
      }
    }
  } else if (op == ops::cat || op == ops::stack) {
    if (e.arg(0).kind != ExprKind::List) return unsupported_list(e, std::move(args));
    a = exprs(list(0), given(1, "0"));
  } else if (op == ops::einsum) {
    if (e.arg(1).kind != ExprKind::List) return unsupported_list(e, std::move(args));
    a = exprs(std::move(args[0].e), list(1));
  } else if (op == ops::ad_add_gradients) {  // one may have no value, so no batch: both given the sum's
    a = exprs(b(0), b(1), mask(l), batch_sizes_of(l));
  } else if (ops::info(op).ad_helper()) {
    // The fg::ad helpers of derivative code: fg::vmap::ad::<op>, tensors as Batched, in order.
    for (size_t i = 0; i < args.size(); ++i) a.push_back(e.args[i]->type == ir::Type::Tensor ? b(i) : std::move(args[i].e));
  } else {  // matmul, mm, bmm, mv, dot, outer
    a = exprs(b(0), b(1));
  }
  return done(member(runtime("vmap::" + e.op, std::move(a), ir::Type::Other), "value"));
}

Val ExprBatcher::unsupported_list(const Expr& e, std::vector<Val> args) {
  ctx_.reporter->report("unsupported", e.range.getBegin(),
                        "under vmap, '" + e.op + "' needs its tensors as a braced list ({a, b}) so that each one's batching is known")
      << e.range;
  return {rebuild(e, values(args)), an_.of(e)};
}

Val ExprBatcher::random(const Expr& e, std::vector<Val> args) {
  const Levels l = an_.of(e);
  const Levels different = an_.vmap().different;
  const ops::OpId op = ops::id(e);
  if (op == ops::randn || op == ops::rand) {
    if (different != 0 && !args.empty())
      args[0].e = runtime("vmap::with_batch", exprs(batch_sizes_of(different), std::move(args[0].e)), ir::Type::IntList);
    return {rebuild(e, values(args)), l};
  }
  const Levels lx = args[0].levels;
  const int nx = nbatch(lx);
  const auto mixed_randomness = [&]() -> Val {
    ctx_.reporter->report("unsupported", e.range.getBegin(),
                          "'" + e.op + "' on a tensor batched at a vmap level with randomness='same' inside a vmap with "
                          "randomness='different' cannot be generated yet; use one randomness for both")
        << e.range;
    return {rebuild(e, values(args)), l};
  };
  if (op == ops::randn_like || op == ops::rand_like) {
    if (lx == different) return {rebuild(e, values(args)), l};
    ExprPtr x = bind(std::move(args[0]), "like");
    ExprPtr sizes = runtime("vmap::logical_sizes", exprs(ir::clone(*x), literal(nx)), ir::Type::IntList);
    if (different != 0) sizes = runtime("vmap::with_batch", exprs(batch_sizes_of(different), std::move(sizes)), ir::Type::IntList);
    ExprPtr opts = runtime("options", exprs(std::move(x)), ir::Type::Other);
    opts->form = ir::CallForm::Method;
    return {runtime(op == ops::rand_like ? "rand" : "randn", exprs(std::move(sizes), std::move(opts))), l};
  }
  // dropout_mask(x, p, train): shaped like x's logical tensor, with the 'different' levels only.
  if (op == ops::dropout_mask) {
    if (lx == different) return {rebuild(e, values(args)), l};
    return {runtime("vmap::dropout_mask", exprs(std::move(args[0].e), literal(nx),
                                                different != 0 ? batch_sizes_of(different) : braced({}),
                                                std::move(args[1].e), std::move(args[2].e))),
            l};
  }
  // feature_dropout(x, p, train) as x * its channel mask ([N, C, 1, ...] of the logical x), drawn
  // per example at 'different' levels; the mask alone likewise (AD's decomposition keeps it).
  if (op == ops::feature_dropout || op == ops::feature_dropout_mask) {
    if (different != 0 && (lx & ~different) != 0) return mixed_randomness();
    const Levels lv = different != 0 ? different : lx;
    ExprPtr x = bind(Val{different != 0 && lx != different ? coerce(std::move(args[0]), different) : std::move(args[0].e), lv}, "x");
    ExprPtr mask = runtime("vmap::feature_dropout_mask",
                           exprs(ir::clone(*x), literal(nbatch(lv)), different != 0 ? batch_sizes_of(different) : braced({}),
                                 std::move(args[1].e), std::move(args[2].e)));
    if (op == ops::feature_dropout_mask) return {std::move(mask), different};
    return {runtime("mul", exprs(std::move(x), std::move(mask))), lv};
  }
  // dropout(x, p, train), bernoulli(p): the mask is drawn per example at 'different' levels.
  if (different == 0) {
    if (op == ops::dropout)
      return {runtime("vmap::dropout_same", exprs(std::move(args[0].e), literal(nx), std::move(args[1].e),
                                                  args.size() > 2 ? std::move(args[2].e) : text("true", ir::Type::Bool))),
              l};
    return {runtime("vmap::bernoulli_same", exprs(std::move(args[0].e), literal(nx))), l};
  }
  if ((lx & ~different) != 0) return mixed_randomness();
  if (lx != different) args[0].e = coerce(std::move(args[0]), different);
  return {rebuild(e, values(args)), l};
}

// The batched tensor operands of a per-example call; `texts` then name each one's example.
std::vector<ExprPtr> ExprBatcher::per_example_operands(const Expr& e, std::vector<Val>& args, std::vector<ExprPtr>& texts) {
  std::vector<ExprPtr> operands;
  int k = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (e.args[i]->type != ir::Type::Tensor) {
      texts.push_back(std::move(args[i].e));
      continue;
    }
    operands.push_back(batched(std::move(args[i].e), args[i].levels));
    texts.push_back(text("example__[" + std::to_string(k++) + "]", ir::Type::Tensor));
  }
  return operands;
}

namespace {
constexpr const char* kPerExample = "[&](const std::vector<fg::Tensor>& example__)";
}

Val ExprBatcher::fallback(const Expr& e, std::vector<Val> args) {
  ctx_.reporter->report("vmap-fallback", e.range.getBegin(),
                        "'" + e.op + "' has no batching rule; under vmap it runs once per example and the results are stacked")
      << e.range;
  std::vector<ExprPtr> texts;
  std::vector<ExprPtr> operands = per_example_operands(e, args, texts);
  std::vector<StmtPtr> body;
  body.push_back(ir::ret(rebuild(e, std::move(texts))));
  ExprPtr run = runtime("vmap::per_example", exprs(braced(std::move(operands)), lambda(kPerExample, std::move(body), false, ir::Type::Tensor)),
                        ir::Type::Other);
  ExprPtr x = member(std::move(run), "value");
  x->levels = an_.of(e);
  return {std::move(x), an_.of(e)};
}

// A call of a function whose body funcgen does not see, with batched tensors: it runs once per
// example whatever it returns (a C++ value per example has nowhere to go, so that is reported).
Val ExprBatcher::unseen(const Expr& e, std::vector<Val> args) {
  if (e.type == ir::Type::Tensor) return fallback(e, std::move(args));
  const std::optional<size_t> outputs = tensor_outputs(e);
  if (!outputs) {
    const std::string type = e.ast != nullptr ? e.ast->getType().getAsString() : "a C++ value";
    ctx_.reporter->report("unsupported", e.range.getBegin(),
                          "'" + e.op + "' is defined where funcgen cannot see it and returns '" + type +
                              "' computed from batched tensors, which under vmap would be one value per example; "
                              "define it in this file or an included header, or return fg::Tensor")
        << e.range;
    return {rebuild(e, values(args)), an_.of(e)};
  }
  ctx_.reporter->report("vmap-fallback", e.range.getBegin(),
                        "'" + e.op + "' is defined where funcgen cannot see it; under vmap it runs once per example" +
                            (*outputs > 0 ? " and its results are stacked" : ""))
      << e.range;
  std::vector<ExprPtr> texts;
  std::vector<ExprPtr> operands = per_example_operands(e, args, texts);
  ExprPtr call = rebuild(e, std::move(texts));
  std::vector<StmtPtr> body;
  if (*outputs == 0) {
    body.push_back(ir::eval(std::move(call)));
    body.push_back(ir::ret(braced({})));
  } else {
    body.push_back(ir::ret(runtime("vmap::tensors_of", exprs(std::move(call)), ir::Type::TensorList)));
  }
  ExprPtr run = runtime("vmap::per_example_outputs",
                        exprs(braced(std::move(operands)),
                              lambda(std::string(kPerExample) + " -> std::vector<fg::Tensor>", std::move(body), false,
                                     ir::Type::TensorList)),
                        ir::Type::TensorList);
  if (*outputs == 0) return {std::move(run), an_.of(e)};
  ExprPtr tuple = runtime("vmap::values_tuple", exprs(std::move(run)), ir::Type::TensorTuple);
  tuple->template_args = "<" + std::to_string(*outputs) + ">";
  tuple->levels = an_.of(e);
  return {std::move(tuple), an_.of(e)};
}

}  // namespace funcgen::vmap
