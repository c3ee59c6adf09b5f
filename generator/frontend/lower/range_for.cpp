#include "frontend/lower/range_for.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <set>
#include <variant>

#include <clang/AST/DeclCXX.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/ParentMapContext.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Lex/Lexer.h>

#include "compat/clang_compat.h"
#include "frontend/pytree.h"
#include "ir/build.h"
#include "ir/cxx_text.h"

#include "frontend/lower/queries.h"

namespace funcgen::lower {

namespace {

// A container with size() and [] (std::vector, std::array; not a C array or a std::set).
bool random_access(clang::QualType t) {
  const clang::CXXRecordDecl* r = bare(t)->getAsCXXRecordDecl();
  if (r == nullptr || !r->hasDefinition()) return false;
  clang::ASTContext& ctx = r->getASTContext();
  return !r->lookup(&ctx.Idents.get("size")).empty() &&
         !r->lookup(ctx.DeclarationNames.getCXXOperatorName(clang::OO_Subscript)).empty();
}

// The length of a C array (`double w[] = {1, 2, 3}`, `fg::Tensor parts[2]`), if `t` is one.
std::optional<uint64_t> array_length(clang::QualType t) {
  const auto* a = llvm::dyn_cast<clang::ConstantArrayType>(bare(t).getCanonicalType().getTypePtr());
  if (a == nullptr) return std::nullopt;
  return a->getSize().getZExtValue();
}

// A break or continue of the loop whose body `s` is (not of a loop or switch inside it).
bool has_jump(const clang::Stmt* s) {
  if (s == nullptr) return false;
  if (llvm::isa<clang::BreakStmt>(s) || llvm::isa<clang::ContinueStmt>(s)) return true;
  if (llvm::isa<clang::ForStmt>(s) || llvm::isa<clang::WhileStmt>(s) || llvm::isa<clang::DoStmt>(s) ||
      llvm::isa<clang::CXXForRangeStmt>(s) || llvm::isa<clang::SwitchStmt>(s))
    return false;
  for (const clang::Stmt* c : s->children())
    if (has_jump(c)) return true;
  return false;
}

}  // namespace

// for (p : x.split(n, d)) body  ->  { const fg::Tensor held = x; for (int64_t i = 0; i < count; ++i) { p = piece i; body } }
StmtPtr RangeForLowering::over_pieces(const clang::CXXForRangeStmt* rs, const Pieces& p) {
  const clang::VarDecl* var = rs->getLoopVariable();
  const clang::CXXRecordDecl* tensor = bare(p.tensor->getType())->getAsCXXRecordDecl();
  StmtPtr block = make(StmtKind::Block, rs);
  const int held = generated_var(var->getNameAsString() + "_pieces__", ir::Type::Tensor, "const fg::Tensor");
  StmtPtr src = make(StmtKind::Decl, rs->getRangeInit());
  src->var = held;
  src->expr = lower_expr(p.tensor);
  block->body.push_back(std::move(src));
  const int n = p.sizes ? -1 : int_local(var->getNameAsString() + "_n__", lower_expr(p.n), rs, block->body);
  const auto n_of = [&] { return n >= 0 ? ir::var_ref(f_, n) : lower_expr(p.n); };
  const int dim = int_local(var->getNameAsString() + "_dim__", piece_dim(p), rs, block->body);
  const int count = int_local(var->getNameAsString() + "_count__",
                              piece_count(p, ir::var_ref(f_, held), n_of(), ir::var_ref(f_, dim), tensor), rs,
                              block->body);
  block->body.push_back(index_loop(rs, "int64_t", ir::var_ref(f_, count), [&](int index) {
    return piece_at(p, ir::var_ref(f_, held), n_of(), ir::var_ref(f_, dim), ir::var_ref(f_, index));
  }));
  return block;
}

// tensor.select(dim, index) of the variable `tensor` (fg::Tensor is `record`).
ExprPtr RangeForLowering::select_of(const clang::CXXRecordDecl* record, int tensor, ExprPtr dim, ExprPtr index) {
  std::vector<ExprPtr> args;
  args.push_back(ir::var_ref(f_, tensor));
  args.push_back(std::move(dim));
  args.push_back(std::move(index));
  return method_call(record, "select", ir::Type::Tensor, std::move(args));
}

// ------------------------------------------------------------------ range-based for loops
// `for (decl : range)` as the loop C++ defines it to be, over what funcgen can index: the slices
// of a tensor (`x.unbind(0)`), a braced list (unrolled), or a named container of numbers.
StmtPtr RangeForLowering::lower_range_for(const clang::CXXForRangeStmt* rs) {
  const clang::Expr* range = strip(rs->getRangeInit());
  if (const auto* list = llvm::dyn_cast<clang::InitListExpr>(range)) return unrolled(rs, list);
  const clang::Expr* dim = nullptr;
  if (const clang::Expr* tensor = unbound(range, dim)) return slices(rs, tensor, dim);
  if (const std::optional<Pieces> p = pieces_of(range)) return over_pieces(rs, *p);
  const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(range);
  if (const pytree::Tree* t = ref != nullptr ? resolve(ref, false) : nullptr; t != nullptr && t->fixed) return over_fixed(rs, *t);
  if (ref != nullptr && resolve(ref, false) != nullptr) {
    unsupported(rs, "a range-based for loop over the parameter '" + ref->getDecl()->getNameAsString() +
                        "' cannot be transformed: funcgen passes its tensors one by one, so they must be read at "
                        "constant indices (" + ref->getDecl()->getNameAsString() + "[0], ...)");
    return nullptr;
  }
  if (ref != nullptr && stacked_.count(ref->getDecl()) != 0) return indexed_stacked(rs, stacked_.at(ref->getDecl()));
  if (list_maker(range) != nullptr) return over_made_list(rs, llvm::cast<clang::CallExpr>(range));
  const bool tensors = ref != nullptr && vars_.count(ref->getDecl()) != 0 &&
                       f_.var(vars_.at(ref->getDecl())).type == ir::Type::TensorList;
  if (ref != nullptr && (tensors || (!holds_tensors(ref->getType()) &&
                                     (random_access(ref->getType()) || array_length(ref->getType())))))
    return indexed(rs, ref, tensors);
  return nullptr;
}

// The tensor of `x.unbind(dim)` or `fg::unbind(x, dim)`, with its dim (null: 0).
const clang::Expr* RangeForLowering::unbound(const clang::Expr* e, const clang::Expr*& dim) {
  const auto* call = llvm::dyn_cast<clang::CallExpr>(e);
  const clang::FunctionDecl* f = call != nullptr ? call->getDirectCallee() : nullptr;
  if (f == nullptr || f->getName() != "unbind" || !compat::starts_with(f->getQualifiedNameAsString(), "fg::")) return nullptr;
  const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(call);
  const unsigned first = mc != nullptr ? 0 : 1;
  if (call->getNumArgs() > first && !llvm::isa<clang::CXXDefaultArgExpr>(call->getArg(first))) dim = call->getArg(first);
  return mc != nullptr ? mc->getImplicitObjectArgument() : call->getArg(0);
}

// for (row : x.unbind(d)) body  ->  { const fg::Tensor rows = x; for (int64_t i = 0; i < rows.size(d); ++i) { row = rows.select(d, i); body } }
StmtPtr RangeForLowering::slices(const clang::CXXForRangeStmt* rs, const clang::Expr* tensor, const clang::Expr* dim_expr) {
  const clang::VarDecl* var = rs->getLoopVariable();
  const auto dim = [&] { return dim_expr != nullptr ? lower_expr(dim_expr) : ir::opaque("0", ir::Type::Int); };
  StmtPtr block = make(StmtKind::Block, rs);
  const int source = generated_var(var->getNameAsString() + "_slices__", ir::Type::Tensor, "const fg::Tensor");
  StmtPtr src = make(StmtKind::Decl, rs->getRangeInit());
  src->var = source;
  src->expr = lower_expr(tensor);
  block->body.push_back(std::move(src));
  const clang::CXXRecordDecl* record = bare(tensor->getType())->getAsCXXRecordDecl();
  std::vector<ExprPtr> size_args;
  size_args.push_back(ir::var_ref(f_, source));
  size_args.push_back(dim());
  ExprPtr size = method_call(record, "size", ir::Type::Int, std::move(size_args));
  block->body.push_back(index_loop(rs, "int64_t", std::move(size),
                                   [&](int index) { return select_of(record, source, dim(), ir::var_ref(f_, index)); }));
  return block;
}

// for (int64_t i = 0; i < bound; ++i) { decl = item(i); body }: a range-based for over what can be
// indexed (`item` makes the loop variable's value from the index).
StmtPtr RangeForLowering::index_loop(const clang::CXXForRangeStmt* rs, const char* index_type, ExprPtr bound,
                                     const std::function<ExprPtr(int)>& item) {
  const clang::VarDecl* var = rs->getLoopVariable();
  StmtPtr loop = make(StmtKind::For, rs);
  const int index = generated_var(var->getNameAsString() + "_index__", ir::Type::Int, index_type);
  StmtPtr init = make(StmtKind::Decl, rs);
  init->var = index;
  init->expr = ir::opaque("0", ir::Type::Int);
  loop->init.push_back(std::move(init));
  loop->expr = ir::binary("<", ir::var_ref(f_, index), std::move(bound), ir::Type::Bool);
  loop->step = ir::unary("++", ir::var_ref(f_, index), ir::Type::Int);
  StmtPtr decl = make(StmtKind::Decl, rs->getLoopVarStmt());
  decl->var = add_var(var, var->getType());
  decl->expr = item(index);
  loop->body.push_back(std::move(decl));
  ++loops_;
  for (StmtPtr& b : lower_body(rs->getBody())) loop->body.push_back(std::move(b));
  --loops_;
  return loop;
}

// for (w : {a, b, c}) body  ->  { w = a; body } { w = b; body } ... (a loop with break or continue
// cannot be unrolled so).
StmtPtr RangeForLowering::unrolled(const clang::CXXForRangeStmt* rs, const clang::InitListExpr* list) {
  if (has_jump(rs->getBody())) return nullptr;
  StmtPtr block = make(StmtKind::Block, rs);
  const clang::VarDecl* var = rs->getLoopVariable();
  // The list is made before the first trip: its items are evaluated first (literals need not be).
  std::vector<ExprPtr> items;
  for (const clang::Expr* item : list->inits()) {
    ExprPtr value = lower_expr(item);
    if (llvm::isa<clang::IntegerLiteral>(strip(item)) || llvm::isa<clang::FloatingLiteral>(strip(item)) ||
        (llvm::isa<clang::UnaryOperator>(strip(item)) && value->kind == ExprKind::Opaque && value->reads.empty())) {
      items.push_back(std::move(value));
      continue;
    }
    const ir::Type type = ir_type_of(item->getType());
    const int held = generated_var(var->getNameAsString() + "_item" + std::to_string(items.size()) + "__", type,
                                   type == ir::Type::Tensor ? "fg::Tensor" : "const auto");
    StmtPtr d = make(StmtKind::Decl, item);
    d->var = held;
    d->expr = std::move(value);
    block->body.push_back(std::move(d));
    items.push_back(ir::var_ref(f_, held));
  }
  for (ExprPtr& item : items) {
    StmtPtr trip = make(StmtKind::Block, rs);
    StmtPtr decl = make(StmtKind::Decl, rs->getLoopVarStmt());
    decl->var = add_var(var, var->getType());
    decl->expr = std::move(item);
    trip->body.push_back(std::move(decl));
    for (StmtPtr& b : lower_body(rs->getBody())) trip->body.push_back(std::move(b));
    block->body.push_back(std::move(trip));
  }
  return block;
}

// for (w : weights) body over a named container or C array of numbers, or a local std::vector of tensors ->
// for (size_t i = 0; i < weights.size(); ++i) { w = weights[i]; body }
StmtPtr RangeForLowering::indexed(const clang::CXXForRangeStmt* rs, const clang::DeclRefExpr* range, bool tensors) {
  const clang::VarDecl* var = rs->getLoopVariable();
  std::vector<int> unused;
  const std::string container = with_leaves(range, text_of(range), unused);
  // (a C array of tensors is held as a std::vector: listed)
  const std::optional<uint64_t> length = tensors ? std::nullopt : array_length(range->getType());
  ExprPtr size = ir::opaque(length ? std::to_string(*length) : container + ".size()", ir::Type::Int);
  size->range = range->getSourceRange();
  if (!tensors) record_uses(range, *size);  // a list's length is the same in every example
  StmtPtr loop = index_loop(rs, "size_t", std::move(size), [&](int index) {
    if (tensors) {  // the element, as the lowering makes `v[i]` of a vector of tensors
      ExprPtr x = ir::element(ir::var_ref(f_, vars_.at(range->getDecl())), ir::var_ref(f_, index));
      x->range = range->getSourceRange();
      x->ast = range;
      return x;
    }
    ExprPtr x = ir::opaque(container + "[" + f_.var(index).name + "]", ir_type_of(var->getType()));
    record_uses(range, *x);
    x->reads.push_back(index);
    return x;
  });
  if (tensors && non_const_reference(var->getType())) write_back_element(*loop, rs, range);
  return loop;
}

// `for (auto& t : v)` over a list of tensors binds `t` to each element in turn: the loop holds the
// element in a variable, and each statement that writes it (an assignment, a write in place, a
// helper's reference parameter) is followed by the element's assignment v[i] = t, a list
// operation, so that AD and vmap see the element change where C++ does.
void RangeForLowering::write_back_element(ir::Stmt& loop, const clang::CXXForRangeStmt* rs, const clang::DeclRefExpr* range) {
  const int list = vars_.at(range->getDecl()), index = loop.init[0]->var, item = vars_.at(rs->getLoopVariable());
  const auto set = [&] {
    StmtPtr st = make(StmtKind::Eval, rs->getLoopVarStmt());
    st->expr = ir::tape_op(f_, ir::kListSet, {list, index, item}, ir::Type::Void);
    st->expr->range = rs->getLoopVariable()->getSourceRange();
    return st;
  };
  const auto reads_item = [&](const ir::Expr& e) {
    bool found = false;
    ir::for_each_expr(e, [&](const ir::Expr& x) { found = found || (x.kind == ExprKind::VarRef && x.var == item); });
    return found;
  };
  // C++ binds `t` to the element itself: a write to the vector in the trip would change `t` too.
  const auto writes_list = [&](const ir::Stmt& st) {
    if (st.kind != StmtKind::Eval || !st.expr) return false;
    bool found = false;
    ir::for_each_expr(*st.expr, [&](const ir::Expr& x) {
      found = found || (x.op == ir::kListSet && ir::is_tape_op(x) && x.reads[0] == list) ||
              (x.kind == ExprKind::Call && x.form == ir::CallForm::User &&
               std::any_of(x.args.begin(), x.args.end(), [&](const ExprPtr& a) { return a->kind == ExprKind::VarRef && a->var == list; }));
    });
    return found;
  };
  std::function<void(std::vector<StmtPtr>&)> after_writes = [&](std::vector<StmtPtr>& body) {
    for (size_t i = 0; i < body.size(); ++i) {
      ir::Stmt& st = *body[i];
      if (writes_list(st)) {
        const std::string v = range->getDecl()->getNameAsString();
        unsupported(st.ast, "'" + v + "' cannot be changed inside a range-based for loop that binds its elements "
                            "by reference ('" + rs->getLoopVariable()->getNameAsString() + "'); loop over an index "
                            "instead (for (size_t i = 0; i < " + v + ".size(); ++i))");
        return;
      }
      if (st.step && reads_item(*st.step)) {
        unsupported(st.ast, "a loop whose step uses '" + rs->getLoopVariable()->getNameAsString() + "', an element "
                            "of '" + range->getDecl()->getNameAsString() + "' bound by reference, cannot be "
                            "transformed; change it in the loop's body");
        return;
      }
      after_writes(st.body);
      after_writes(st.else_body);
      const bool writes = (st.kind == StmtKind::Assign && st.var == item) ||
                          (st.kind == StmtKind::Eval && st.expr && reads_item(*st.expr));
      if (writes) body.insert(body.begin() + static_cast<std::ptrdiff_t>(++i), set());
    }
  };
  after_writes(loop.body);
}

// for (l : ls) body over a vector held as its elements (find_fixed)  ->  { l = ls[0]; body } { l =
// ls[1]; body } ...: a reference (or a const copy) is another name for the element's leaves, a copy
// of a tensor a tensor of its own. (A loop with break or continue cannot be unrolled so.)
StmtPtr RangeForLowering::over_fixed(const clang::CXXForRangeStmt* rs, const pytree::Tree& t) {
  const clang::VarDecl* var = rs->getLoopVariable();
  const std::string v = text_of(rs->getRangeInit()), name = var->getNameAsString();
  if (has_jump(rs->getBody())) {
    unsupported(rs, "a range-based for loop with break or continue over '" + v + "', a vector that funcgen holds as "
                    "its elements, cannot be transformed yet; loop over an index (for (size_t i = 0; i < " + v +
                    ".size(); ++i))");
    return nullptr;
  }
  const bool named = var->getType()->isReferenceType() || var->getType().isConstQualified();
  if (!named && !t.children.empty() && !t.children[0].is_leaf()) {
    unsupported_at(var->getLocation(), "a copy of each structure of '" + v + "' cannot be transformed yet; loop over it by const "
                     "reference (const auto& " + name + " : " + v + ")");
    return nullptr;
  }
  const std::vector<pytree::Tree> elements = t.children;  // (trees_ gains the loop variable)
  StmtPtr block = make(StmtKind::Block, rs);
  for (const pytree::Tree& element : elements) {
    StmtPtr trip = make(StmtKind::Block, rs);
    if (named) {
      trees_[var] = element;
    } else {
      StmtPtr decl = make(StmtKind::Decl, rs->getLoopVarStmt());
      decl->var = add_var(var, var->getType());
      decl->expr = node_value(element, rs->getRangeInit());
      trip->body.push_back(std::move(decl));
    }
    for (StmtPtr& b : lower_body(rs->getBody())) trip->body.push_back(std::move(b));
    block->body.push_back(std::move(trip));
  }
  trees_.erase(var);
  return block;
}

// for (p : pieces(n)) body  ->  { std::vector<fg::Tensor> p_items__ = pieces(n); for (size_t i = 0;
// i < p_items__.size(); ++i) { p = p_items__[i]; body } }: the list a helper or lambda built.
StmtPtr RangeForLowering::over_made_list(const clang::CXXForRangeStmt* rs, const clang::CallExpr* call) {
  const std::string name = numbered(rs->getLoopVariable()->getNameAsString(), "_items__") + "_items__";
  const int list = generated_var(name, ir::Type::TensorList, "std::vector<fg::Tensor>");
  StmtPtr block = make(StmtKind::Block, rs);
  StmtPtr d = make(StmtKind::Decl, call);
  d->var = list;
  d->expr = lower_expr(call);
  block->body.push_back(std::move(d));
  ExprPtr size = ir::opaque(name + ".size()", ir::Type::Int);
  size->range = call->getSourceRange();
  block->body.push_back(index_loop(rs, "size_t", std::move(size), [&](int index) {
    ExprPtr x = ir::element(ir::var_ref(f_, list), ir::var_ref(f_, index));
    x->range = call->getSourceRange();
    return x;
  }));
  return block;
}

}  // namespace funcgen::lower
