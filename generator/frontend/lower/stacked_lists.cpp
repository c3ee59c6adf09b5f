#include "frontend/lower/stacked_lists.h"

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

// The pieces `e` makes, if it is a split by an integer size or a chunk.
std::optional<Pieces> StackedListLowering::pieces_of(const clang::Expr* e) const {
  const auto* call = llvm::dyn_cast<clang::CallExpr>(e);
  const clang::FunctionDecl* f = call != nullptr ? call->getDirectCallee() : nullptr;
  if (f == nullptr || (f->getName() != "split" && f->getName() != "chunk") ||
      !compat::starts_with(f->getQualifiedNameAsString(), "fg::"))
    return std::nullopt;
  const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(call);
  const unsigned first = mc != nullptr ? 0 : 1;
  if (call->getNumArgs() <= first) return std::nullopt;
  Pieces p;
  p.sizes = !call->getArg(first)->getType()->isIntegerType();
  p.tensor = mc != nullptr ? mc->getImplicitObjectArgument() : call->getArg(0);
  p.n = call->getArg(first);
  if (call->getNumArgs() > first + 1 && !llvm::isa<clang::CXXDefaultArgExpr>(call->getArg(first + 1)))
    p.dim = call->getArg(first + 1);
  p.chunk = f->getName() == "chunk";
  return p;
}

ExprPtr StackedListLowering::piece_dim(const Pieces& p) {
  return p.dim != nullptr ? lower_expr(p.dim) : ir::opaque("0", ir::Type::Int);
}

// How many pieces the tensor `held` (lowered) makes, for n and dim (lowered).
ExprPtr StackedListLowering::piece_count(const Pieces& p, ExprPtr held, ExprPtr n, ExprPtr dim,
                                         const clang::CXXRecordDecl* tensor) {
  std::vector<ExprPtr> size_args, args;
  if (p.sizes) {
    args.push_back(std::move(n));
    return fg_call("ad::split_with_sizes_count", ir::Type::Int, std::move(args), {"split_sizes"});
  }
  size_args.push_back(std::move(held));
  size_args.push_back(std::move(dim));
  args.push_back(method_call(tensor, "size", ir::Type::Int, std::move(size_args)));
  args.push_back(std::move(n));
  return fg_call(p.chunk ? "ad::chunk_count" : "ad::split_count", ir::Type::Int, std::move(args),
                 {"size", p.chunk ? "chunks" : "split_size"});
}

// Piece `index` of the tensor `held`, for n and dim (all lowered).
ExprPtr StackedListLowering::piece_at(const Pieces& p, ExprPtr held, ExprPtr n, ExprPtr dim, ExprPtr index) {
  std::vector<ExprPtr> args;
  args.push_back(std::move(held));
  args.push_back(std::move(n));
  args.push_back(std::move(dim));
  args.push_back(std::move(index));
  return fg_call(p.chunk ? "ad::chunk_piece" : p.sizes ? "ad::split_with_sizes_piece" : "ad::split_piece",
                 ir::Type::Tensor, std::move(args),
                 {"self", p.chunk ? "chunks" : p.sizes ? "split_sizes" : "split_size", "dim", "index"});
}

// `x.chunk(n, d)[i]`, `.at(i)`, `.front()`, `.back()` of pieces not stored in a variable.
ExprPtr StackedListLowering::piece_read(const clang::Expr* e) {
  const clang::Expr* object = nullptr;
  const clang::Expr* index = nullptr;
  std::string m;
  if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); oc != nullptr && oc->getOperator() == clang::OO_Subscript) {
    object = strip(oc->getArg(0));
    index = oc->getArg(1);
  } else if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(e); mc != nullptr && mc->getMethodDecl() != nullptr) {
    m = mc->getMethodDecl()->getNameAsString();
    object = strip(mc->getImplicitObjectArgument());
    if (m == "at" && mc->getNumArgs() == 1) index = mc->getArg(0);
    else if (m != "front") object = nullptr;  // back() needs the count: store the pieces in a variable
  }
  const std::optional<Pieces> p = object != nullptr ? pieces_of(object) : std::nullopt;
  if (!p) return nullptr;
  ExprPtr x = piece_at(*p, lower_expr(p->tensor), lower_expr(p->n), piece_dim(*p),
                       index != nullptr ? lower_expr(index) : ir::opaque("0", ir::Type::Int));
  x->range = e->getSourceRange();
  return x;
}

// The vectors of the body that qualify: every use is one of the above (or reserve, empty, back,
// front, at, a range-based for), one push_back at least, and a stack along dim 0 or 1.
void StackedListLowering::find_stacked(const clang::Stmt* body) {
  struct Uses : clang::RecursiveASTVisitor<Uses> {
    StackedListLowering* self;
    std::map<const clang::VarDecl*, int> refs, allowed, pushes, stacks, cats, passed, written, sets, odd_dims, returned;
    std::map<const clang::VarDecl*, const clang::Stmt*> first_push;
    std::vector<const clang::VarDecl*> order;
    const clang::VarDecl* local(const clang::Expr* e) {
      const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(self->strip(e));
      const auto* vd = r != nullptr ? llvm::dyn_cast<clang::VarDecl>(r->getDecl()) : nullptr;
      return vd != nullptr && vd->isLocalVarDecl() && is_tensor_vector(vd->getType()) ? vd : nullptr;
    }
    bool VisitVarDecl(clang::VarDecl* vd) {
      if (vd->isLocalVarDecl() && is_tensor_vector(vd->getType())) order.push_back(vd);
      return true;
    }
    bool VisitDeclRefExpr(clang::DeclRefExpr* r) {
      if (const auto* vd = local(r)) ++refs[vd];
      return true;
    }
    bool VisitCXXMemberCallExpr(clang::CXXMemberCallExpr* mc) {
      const clang::VarDecl* vd = mc->getMethodDecl() != nullptr ? local(mc->getImplicitObjectArgument()) : nullptr;
      if (vd == nullptr) return true;
      const std::string m = mc->getMethodDecl()->getNameAsString();
      if (is_push(mc) && pushes[vd]++ == 0) first_push[vd] = mc;
      if (is_push(mc) || m == "size" || m == "empty" || m == "back" || m == "front" || m == "at" || m == "reserve") ++allowed[vd];
      if ((m == "back" || m == "front" || m == "at") && self->written_through(mc))
        ++(self->element_assigned(mc) ? sets : written)[vd];
      return true;
    }
    bool VisitCXXOperatorCallExpr(clang::CXXOperatorCallExpr* oc) {
      if (oc->getOperator() == clang::OO_Subscript && local(oc->getArg(0)) != nullptr) {
        ++allowed[local(oc->getArg(0))];
        if (self->written_through(oc)) ++(self->element_assigned(oc) ? sets : written)[local(oc->getArg(0))];
      }
      return true;
    }
    bool VisitCallExpr(clang::CallExpr* call) {
      const clang::FunctionDecl* f = call->getDirectCallee();
      const std::string name = f != nullptr ? f->getQualifiedNameAsString() : "";
      if (f != nullptr && self->is_user_function(f))  // passed to a helper that reads it (const)
        for (unsigned i = 0; i < call->getNumArgs() && i < f->getNumParams(); ++i)
          if (const clang::VarDecl* vd = local(call->getArg(i))) {
            const clang::QualType t = f->getParamDecl(i)->getType();
            ++allowed[vd], ++passed[vd];
            // by non-const reference: the helper may assign its elements (a list operation, as v[i] = y)
            if (t->isReferenceType() && !t.getNonReferenceType().isConstQualified()) ++sets[vd];
          }
      if ((name != "fg::stack" && name != "fg::cat") || call->getNumArgs() == 0) return true;
      if (const clang::VarDecl* vd = local(call->getArg(0))) {
        ++allowed[vd];
        if (name == "fg::stack") ++stacks[vd];  // (a cat alone would take elements of different sizes)
        else ++cats[vd];
        if (call->getNumArgs() > 1 && !llvm::isa<clang::CXXDefaultArgExpr>(call->getArg(1))) {
          const std::optional<llvm::APSInt> d = call->getArg(1)->getIntegerConstantExpr(self->context_);
          if (!d || (*d != 0 && *d != 1)) ++odd_dims[vd];  // held stacked, only dims 0 and 1 are lowered
        }
      }
      return true;
    }
    bool VisitReturnStmt(clang::ReturnStmt* r) {
      if (const clang::VarDecl* vd = r->getRetValue() != nullptr ? local(self->unmoved(r->getRetValue())) : nullptr)
        ++allowed[vd], ++returned[vd];
      return true;
    }
    bool VisitCXXForRangeStmt(clang::CXXForRangeStmt* rs) {
      if (const clang::VarDecl* vd = local(rs->getRangeInit())) {
        ++allowed[vd];
        // `for (auto& r : v)` may assign the elements: each trip's element is written back (indexed())
        const clang::QualType t = rs->getLoopVariable()->getType();
        if (t->isReferenceType() && !t.getNonReferenceType().isConstQualified()) ++sets[vd];
      }
      return true;
    }
  } uses;
  uses.self = this;
  uses.TraverseStmt(const_cast<clang::Stmt*>(body));
  for (const clang::VarDecl* vd : uses.order) {
    if (fixed_.count(vd) != 0) continue;  // held as its elements (find_fixed)
    const clang::Expr* init = vd->getInit() != nullptr ? strip(vd->getInit()) : nullptr;
    const clang::Expr* slice_dim = nullptr;
    if (const std::optional<Pieces> pieces = init != nullptr ? pieces_of(init) : std::nullopt) {
      // Pieces of different sizes: read, sized and looped over only.
      if (uses.allowed[vd] != uses.refs[vd] || uses.written[vd] + uses.sets[vd] + uses.returned[vd] != 0 ||
          uses.passed[vd] + uses.pushes[vd] + uses.stacks[vd] + uses.cats[vd] != 0) {
        const std::string name = vd->getNameAsString();
        reject_variable(vd, init,
                        "the pieces in '" + name + "' cannot be transformed: funcgen transforms a vector of a "
                        "tensor's pieces (split, chunk) when the function only reads its elements (" + name +
                        "[i]), sizes it or loops over it; to join them again, use the tensor they came from");
        continue;
      }
      Stacked v;
      v.pieces = pieces;
      stacked_[vd] = v;
      continue;
    }
    if (const clang::Expr* x = init != nullptr ? unbound(init, slice_dim) : nullptr) {
      // Its elements have one shape: it may be read, sized, looped over and stacked, and grown by
      // push_back only where it is stacked (pushing another shape is for the stack to refuse).
      if (uses.allowed[vd] != uses.refs[vd] || uses.written[vd] + uses.sets[vd] + uses.returned[vd] != 0 || uses.passed[vd] != 0 ||
          (uses.pushes[vd] != 0 && uses.stacks[vd] == 0)) {
        reject_variable(vd, init,
                        "the slices of a tensor in '" + vd->getNameAsString() + "' cannot be transformed: funcgen "
                        "transforms a vector of a tensor's slices when the function only reads its elements, sizes "
                        "it, loops over it or stacks it (fg::stack(" + vd->getNameAsString() + "))");
        continue;
      }
      Stacked v;
      v.slices_of = x;
      v.slice_dim = slice_dim;
      stacked_[vd] = v;
      continue;
    }
    const auto* braces = llvm::dyn_cast_or_null<clang::InitListExpr>(init);
    const bool braced = braces != nullptr && braces->getNumInits() > 0;
    const auto* ctor = llvm::dyn_cast_or_null<clang::CXXConstructExpr>(init);
    const bool made = list_maker(init) != nullptr;  // `hs = states(x, n)`: the list a helper built
    const bool starts = init == nullptr || llvm::isa<clang::InitListExpr>(init) || (ctor != nullptr && ctor->getNumArgs() == 0) || made;
    const bool filled = filled_with(ctor) != nullptr;
    const bool follows = uses.allowed[vd] == uses.refs[vd] && uses.written[vd] == 0;  // every use is one of the above
    // Held stacked where its elements have one shape: stacked, and otherwise only read, sized,
    // looped over or concatenated (along dim 0 or 1 where built with braces).
    const bool stackable = uses.stacks[vd] != 0 && follows && uses.sets[vd] == 0 && uses.passed[vd] + uses.returned[vd] == 0 && !made &&
                           starts && uses.odd_dims[vd] == 0 && (uses.pushes[vd] != 0 || braced);
    if (stackable) {
      stacked_[vd] = Stacked{};
      continue;
    }
    // Otherwise a list of tensors of any shapes, read at run-time indices (`skips[i]`), as JAX keeps
    // a Python list of activations: pushed to, its elements assigned (`h[l] = y;`), concatenated
    // or stacked (join_lists), passed to helpers. One built with braces and only read is a list
    // under AD (anf.cpp) and vmap batches it as it is.
    if (uses.pushes[vd] == 0) {
      if (follows && (filled || made || (braced && uses.sets[vd] + uses.cats[vd] + uses.stacks[vd] + uses.returned[vd] != 0)))
        listed_.insert(vd);
      continue;
    }
    if (follows && (starts || filled)) {
      listed_.insert(vd);
      continue;
    }
    const clang::Stmt* at = uses.first_push[vd] != nullptr ? uses.first_push[vd] : static_cast<const clang::Stmt*>(init);
    const std::string name = vd->getNameAsString();
    const std::string why = !(starts || filled) ? "it is not declared empty, with braces or as copies of one value"
                            : uses.written[vd] != 0
                                ? "an element of it is changed in place or bound to a non-const reference; assign "
                                  "the new value (" + name + "[i] = y) instead"
                                : "it is used in a way funcgen does not follow (iterators, assigned whole, passed by "
                                  "non-const reference, cleared or popped); index it (" + name + "[i]) or loop over "
                                  "it with a range-for";
    reject_variable(vd, at,
                    (uses.pushes[vd] != 0 ? "push_back into '" : "the vector '") + name +
                    "' cannot be transformed: funcgen transforms a vector of tensors declared empty or with braces "
                    "and filled with push_back when the function then only reads its elements (" + name +
                    "[i], back(), a range-for by const reference), assigns them (" + name + "[i] = y), sizes, "
                    "concatenates or stacks it, or passes it to a helper, but " + why);
  }
}

// Whether the element `e` names is assigned a new tensor by a statement of its own (`v[i] = y;`).
bool StackedListLowering::element_assigned(const clang::Expr* e) const {
  const clang::Expr* at = e;
  while (true) {
    const auto parents = context_.getParentMapContext().getParents(*at);
    const auto* p = parents.empty() ? nullptr : parents[0].get<clang::Expr>();
    if (p == nullptr) return false;
    if (llvm::isa<clang::ImplicitCastExpr>(p) || llvm::isa<clang::ParenExpr>(p) || llvm::isa<clang::MaterializeTemporaryExpr>(p)) {
      at = p;
      continue;
    }
    const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(p);
    if (oc == nullptr || oc->getOperator() != clang::OO_Equal || oc->getArg(0)->IgnoreParenImpCasts() != at->IgnoreParenImpCasts())
      return false;
    const auto up = context_.getParentMapContext().getParents(*oc);
    const clang::Expr* above = up.empty() ? nullptr : up[0].get<clang::Expr>();
    if (above != nullptr && llvm::isa<clang::ExprWithCleanups>(above)) {
      const auto top = context_.getParentMapContext().getParents(*above);
      above = top.empty() ? nullptr : top[0].get<clang::Expr>();
    }
    return above == nullptr && !up.empty();  // the assignment is a statement
  }
}

// Whether the element `e` names is written: assigned to, changed in place (x.add_(y)), or bound
// to a non-const reference.
bool StackedListLowering::written_through(const clang::Expr* e) const {
  const clang::Expr* at = e;
  while (true) {
    const auto parents = context_.getParentMapContext().getParents(*at);
    if (parents.empty()) return false;
    const auto* p = parents[0].get<clang::Expr>();
    if (p == nullptr) {
      const auto* vd = parents[0].get<clang::VarDecl>();
      return vd != nullptr && vd->getType()->isReferenceType() && !vd->getType().getNonReferenceType().isConstQualified();
    }
    if (llvm::isa<clang::ImplicitCastExpr>(p) || llvm::isa<clang::ParenExpr>(p) || llvm::isa<clang::MaterializeTemporaryExpr>(p)) {
      at = p;
      continue;
    }
    if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(p)) return b->isAssignmentOp() && b->getLHS()->IgnoreParenImpCasts() == at->IgnoreParenImpCasts();
    if (const auto* o = llvm::dyn_cast<clang::CXXOperatorCallExpr>(p))
      return o->isAssignmentOp() && o->getNumArgs() > 0 && o->getArg(0)->IgnoreParenImpCasts() == at->IgnoreParenImpCasts();
    if (const auto* m = llvm::dyn_cast<clang::MemberExpr>(p)) {
      const std::string name = m->getMemberDecl()->getNameAsString();
      return !name.empty() && name.back() == '_';
    }
    return false;
  }
}

Stacked* StackedListLowering::stacked_object(const clang::CXXMemberCallExpr* mc) {
  if (mc->getMethodDecl() == nullptr || mc->getImplicitObjectArgument() == nullptr) return nullptr;
  const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(strip(mc->getImplicitObjectArgument()));
  auto it = r != nullptr ? stacked_.find(r->getDecl()) : stacked_.end();
  return it != stacked_.end() ? &it->second : nullptr;
}

const clang::VarDecl* StackedListLowering::listed_object(const clang::CXXMemberCallExpr* mc) {
  if (listed_.empty() || mc->getMethodDecl() == nullptr || mc->getImplicitObjectArgument() == nullptr) return nullptr;
  const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(strip(mc->getImplicitObjectArgument()));
  const auto* vd = r != nullptr ? llvm::dyn_cast<clang::VarDecl>(r->getDecl()) : nullptr;
  return vd != nullptr && listed_.count(vd) != 0 ? vd : nullptr;
}

// v.push_back(e) on a list  ->  { const fg::Tensor v_item__ = e; v.push_back(v_item__); }: the push
// is a list operation (ir::kListPush) on the list and a value, which AD and vmap follow.
StmtPtr StackedListLowering::push_listed(const clang::VarDecl* vd, const clang::CXXMemberCallExpr* mc) {
  auto it = vars_.find(vd);
  if (it == vars_.end()) {
    unsupported(mc, "internal error: push_back into '" + vd->getNameAsString() + "' before its declaration");
    return nullptr;
  }
  const auto push_of = [&](int item) {
    StmtPtr p = make(StmtKind::Eval, mc);
    p->expr = ir::tape_op(f_, ir::kListPush, {it->second, item}, ir::Type::Void);
    p->expr->range = mc->getSourceRange();
    return p;
  };
  const clang::Expr* pushed = unmoved(mc->getArg(0));
  if (const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(pushed))  // v.push_back(h)
    if (auto named = vars_.find(r->getDecl()); named != vars_.end() && f_.var(named->second).type == ir::Type::Tensor)
      return push_of(named->second);
  StmtPtr block = make(StmtKind::Block, mc);
  const int item = declare_made(block->body, mc, vd->getNameAsString() + "_item__", ir::Type::Tensor,
                                "const fg::Tensor", lower_expr(pushed));
  block->body.push_back(push_of(item));
  return block;
}

// fg::cat({items...}, dim), for the code the lowering writes (`at`: where it stands for).
ExprPtr StackedListLowering::cat_of(const clang::Expr* at, std::vector<ExprPtr> items, ExprPtr dim) {
  ExprPtr list = make_expr(ExprKind::List, at);
  list->type = ir::Type::TensorList;
  list->args = std::move(items);
  return fg_call("cat", ir::Type::Tensor, exprs_of(std::move(list), std::move(dim)), {"tensors", "dim"});
}

// h of std::move(h) (what a list stores, a handle, is the same), else e; stripped.
const clang::Expr* StackedListLowering::unmoved(const clang::Expr* e) {
  e = strip(e);
  const auto* move = llvm::dyn_cast<clang::CallExpr>(e);
  if (move != nullptr && move->getNumArgs() == 1 && move->getDirectCallee() != nullptr &&
      move->getDirectCallee()->getQualifiedNameAsString() == "std::move")
    return strip(move->getArg(0));
  return e;
}

// std::vector<fg::Tensor> v;  ->  fg::Tensor v; int64_t v_size__ = 0;  (with {a, b}: fg::stack({a, b}) and 2)
void StackedListLowering::declare_stacked(Stacked& v, const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) {
  v.var = generated_var(vd->getNameAsString(), ir::Type::Tensor, "fg::Tensor");
  f_.vars[static_cast<size_t>(v.var)].decl = vd;
  v.count = generated_var(vd->getNameAsString() + "_size__", ir::Type::Int, "int64_t");
  v.loops = loops_;
  StmtPtr d = make(StmtKind::Decl, ds);
  d->var = v.var;
  if (v.pieces) {  // = x.split(n, dim): x, n, dim and the count of pieces
    const clang::CXXRecordDecl* tensor = bare(v.pieces->tensor->getType())->getAsCXXRecordDecl();
    d->expr = lower_expr(v.pieces->tensor);
    out.push_back(std::move(d));
    if (!v.pieces->sizes) v.piece_n = int_local(vd->getNameAsString() + "_n__", lower_expr(v.pieces->n), ds, out);
    v.piece_dim = int_local(vd->getNameAsString() + "_dim__", piece_dim(*v.pieces), ds, out);
    StmtPtr c = make(StmtKind::Decl, ds);
    c->var = v.count;
    c->expr = piece_count(*v.pieces, ir::var_ref(f_, v.var), piece_n(v), ir::var_ref(f_, v.piece_dim), tensor);
    out.push_back(std::move(c));
    v.pushed = true;
    return;
  }
  if (v.slices_of != nullptr) {  // = x.unbind(dim): x.movedim(dim, 0), x.size(dim) slices
    const clang::CXXRecordDecl* tensor = bare(v.slices_of->getType())->getAsCXXRecordDecl();
    const auto dim = [&] { return v.slice_dim != nullptr ? lower_expr(v.slice_dim) : ir::opaque("0", ir::Type::Int); };
    std::vector<ExprPtr> moved, sized;
    moved.push_back(lower_expr(v.slices_of));
    moved.push_back(dim());
    moved.push_back(ir::opaque("0", ir::Type::Int));
    d->expr = method_call(tensor, "movedim", ir::Type::Tensor, std::move(moved));
    out.push_back(std::move(d));
    sized.push_back(ir::var_ref(f_, v.var));
    sized.push_back(ir::opaque("0", ir::Type::Int));
    StmtPtr c = make(StmtKind::Decl, ds);
    c->var = v.count;
    c->expr = method_call(tensor, "size", ir::Type::Int, std::move(sized));
    out.push_back(std::move(c));
    v.pushed = true;
    return;
  }
  size_t given = 0;
  if (const auto* list = llvm::dyn_cast_or_null<clang::InitListExpr>(vd->getInit() ? strip(vd->getInit()) : nullptr);
      list != nullptr && list->getNumInits() > 0) {
    ExprPtr items = make_expr(ExprKind::List, list);
    items->type = ir::Type::TensorList;
    for (const clang::Expr* item : list->inits()) items->args.push_back(lower_expr(item));
    given = list->getNumInits();
    std::vector<ExprPtr> args;
    args.push_back(std::move(items));
    args.push_back(ir::opaque("0", ir::Type::Int));
    d->expr = fg_call("stack", ir::Type::Tensor, std::move(args), {"tensors", "dim"});
    v.pushed = true;
  }
  out.push_back(std::move(d));
  StmtPtr c = make(StmtKind::Decl, ds);
  c->var = v.count;
  c->expr = ir::opaque(std::to_string(given), ir::Type::Int);
  out.push_back(std::move(c));
}

// v.push_back(e)  ->  { item = e.unsqueeze(0); v = v_size__ == 0 ? item : fg::cat({v, item}); v_size__ += 1; }
// (as an if: the first push of a vector that none can precede is the plain assignment).
StmtPtr StackedListLowering::push(Stacked& v, const clang::CXXMemberCallExpr* mc) {
  StmtPtr block = make(StmtKind::Block, mc);
  const clang::CXXRecordDecl* tensor = bare(mc->getArg(0)->getType())->getAsCXXRecordDecl();
  std::vector<ExprPtr> args;
  args.push_back(lower_expr(mc->getArg(0)));
  args.push_back(ir::opaque("0", ir::Type::Int));
  const int item = generated_var(f_.var(v.var).name + "_item__", ir::Type::Tensor, "fg::Tensor");
  StmtPtr d = make(StmtKind::Decl, mc);
  d->var = item;
  d->expr = tensor != nullptr ? method_call(tensor, "unsqueeze", ir::Type::Tensor, std::move(args)) : nullptr;
  block->body.push_back(std::move(d));
  const auto assign = [&](ExprPtr value) {
    StmtPtr a = make(StmtKind::Assign, mc);
    a->var = v.var;
    a->text = "=";
    a->expr = std::move(value);
    return a;
  };
  const auto appended = [&] {
    return cat_of(mc, exprs_of(ir::var_ref(f_, v.var), ir::var_ref(f_, item)), ir::opaque("0", ir::Type::Int));
  };
  if (!v.pushed && loops_ == v.loops) {
    block->body.push_back(assign(ir::var_ref(f_, item)));  // the first element
  } else {
    StmtPtr branch = make(StmtKind::If, mc);
    branch->expr = ir::binary("==", ir::var_ref(f_, v.count), ir::opaque("0", ir::Type::Int), ir::Type::Bool);
    branch->body.push_back(assign(ir::var_ref(f_, item)));
    branch->else_body.push_back(assign(appended()));
    branch->has_else = true;
    block->body.push_back(std::move(branch));
  }
  v.pushed = true;
  StmtPtr count = make(StmtKind::Assign, mc);
  count->var = v.count;
  count->text = "+=";
  count->expr = ir::opaque("1", ir::Type::Int);
  block->body.push_back(std::move(count));
  return block;
}

// `both(x)[0]`, `both(x).back()` of a helper that returns a list it built, a method of that
// element (`both(x)[0].sum()`), or the list passed on (`fg::stack(both(x))`): reported (the list
// must be a variable's).
ExprPtr StackedListLowering::made_list_read(const clang::Expr* e) {
  const auto object_of = [&](const clang::Expr* x) -> const clang::Expr* {
    const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(x);
    const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(x);
    if (oc != nullptr && oc->getOperator() == clang::OO_Subscript) return strip(oc->getArg(0));
    return mc != nullptr ? strip(mc->getImplicitObjectArgument()) : nullptr;
  };
  const clang::Expr* object = object_of(e);
  const clang::FunctionDecl* f = list_maker(object);
  if (f == nullptr && object != nullptr) f = list_maker(object_of(object));
  if (const auto* call = llvm::dyn_cast<clang::CallExpr>(e); f == nullptr && call != nullptr && unmoved(call) == call)
    for (const clang::Expr* arg : call->arguments())  // `fg::stack(steps(x, n))`, `total(steps(x, n))`
      if ((f = list_maker(strip(arg))) != nullptr) break;
  if (f == nullptr) return nullptr;
  const std::string name = f->getNameAsString();
  unsupported(e, "the vector '" + name + "' returns is used where it is returned, which cannot be transformed yet; "
                 "store it in a variable first (auto v = " + name + "(...);)");
  return opaque(e);
}

// Reads of a stacked vector: v.size(), v.empty(), v[i], v.at(i), v.back(), v.front(), fg::stack(v[, 0 or 1]).
ExprPtr StackedListLowering::stacked_read(const clang::Expr* e) {
  if (stacked_.empty()) return nullptr;
  const auto select = [&](const Stacked& v, ExprPtr index) {
    ExprPtr x = element_of(v, bare(e->getType())->getAsCXXRecordDecl(), std::move(index));
    x->range = e->getSourceRange();
    return x;
  };
  if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(e)) {
    Stacked* v = stacked_object(mc);
    if (v == nullptr) return nullptr;
    const std::string m = mc->getMethodDecl()->getNameAsString();
    if (m == "size") {  // size_t, as std::vector::size() (`i < v.size()` with a size_t i)
      ExprPtr x = make_expr(ExprKind::Cast, mc);
      x->text = "size_t";
      x->type = ir::Type::Int;
      x->args.push_back(ir::var_ref(f_, v->count));
      return x;
    }
    if (m == "empty") return ir::binary("==", ir::var_ref(f_, v->count), ir::opaque("0", ir::Type::Int), ir::Type::Bool);
    if (m == "front") return select(*v, ir::opaque("0", ir::Type::Int));
    if (m == "back")
      return select(*v, ir::binary("-", ir::var_ref(f_, v->count), ir::opaque("1", ir::Type::Int), ir::Type::Int));
    if (m == "at") return select(*v, lower_expr(mc->getArg(0)));
    unsupported(mc, "'" + m + "' on a vector funcgen holds stacked cannot be transformed");
    return opaque(mc);
  }
  if (const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e); oc != nullptr && oc->getOperator() == clang::OO_Subscript) {
    const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(strip(oc->getArg(0)));
    if (r == nullptr || stacked_.count(r->getDecl()) == 0) return nullptr;
    return select(stacked_.at(r->getDecl()), lower_expr(oc->getArg(1)));
  }
  const auto* call = llvm::dyn_cast<clang::CallExpr>(e);
  const std::string callee = call != nullptr && call->getDirectCallee() != nullptr
                                 ? call->getDirectCallee()->getQualifiedNameAsString() : "";
  if ((callee != "fg::stack" && callee != "fg::cat") || call->getNumArgs() == 0) return nullptr;
  const bool cat = callee == "fg::cat";
  const auto* r = llvm::dyn_cast<clang::DeclRefExpr>(strip(call->getArg(0)));
  if (r == nullptr || stacked_.count(r->getDecl()) == 0) return nullptr;
  const Stacked& v = stacked_.at(r->getDecl());
  std::optional<llvm::APSInt> dim;
  if (call->getNumArgs() > 1 && !llvm::isa<clang::CXXDefaultArgExpr>(call->getArg(1)))
    dim = call->getArg(1)->getIntegerConstantExpr(context_);
  else
    dim = llvm::APSInt::get(0);
  if (!dim || (*dim != 0 && *dim != 1)) {
    unsupported(call, std::string(cat ? "concatenating" : "stacking") + " '" + r->getDecl()->getNameAsString() +
                          "' along a dim other than 0 or 1 cannot be transformed yet; " +
                          (cat ? "concatenate" : "stack") + " along 0 and move the dim with permute");
    return opaque(call);
  }
  const clang::CXXRecordDecl* tensor = bare(call->getType())->getAsCXXRecordDecl();
  if (cat) {  // the held [n, d0, d1, ...] with n merged into the dim: flatten(0, 1), or movedim(0, 1).flatten(1, 2)
    ExprPtr held = ir::var_ref(f_, v.var);
    if (*dim == 1) {
      std::vector<ExprPtr> moved;
      moved.push_back(std::move(held));
      moved.push_back(ir::opaque("0", ir::Type::Int));
      moved.push_back(ir::opaque("1", ir::Type::Int));
      held = method_call(tensor, "movedim", ir::Type::Tensor, std::move(moved));
    }
    std::vector<ExprPtr> args;
    args.push_back(std::move(held));
    args.push_back(ir::opaque(*dim == 0 ? "0" : "1", ir::Type::Int));
    args.push_back(ir::opaque(*dim == 0 ? "1" : "2", ir::Type::Int));
    return method_call(tensor, "flatten", ir::Type::Tensor, std::move(args));
  }
  if (*dim == 0) return ir::var_ref(f_, v.var);
  std::vector<ExprPtr> args;  // stacked along 1: the list's dim after the elements' first
  args.push_back(ir::var_ref(f_, v.var));
  args.push_back(ir::opaque("0", ir::Type::Int));
  args.push_back(ir::opaque("1", ir::Type::Int));
  return method_call(tensor, "transpose", ir::Type::Tensor, std::move(args));
}

// for (h : v) over a stacked vector: for (int64_t i = 0; i < v_size__; ++i) { h = v.select(0, i); body }
StmtPtr StackedListLowering::indexed_stacked(const clang::CXXForRangeStmt* rs, const Stacked& v) {
  const clang::CXXRecordDecl* tensor = bare(rs->getLoopVariable()->getType())->getAsCXXRecordDecl();
  return index_loop(rs, "int64_t", ir::var_ref(f_, v.count),
                    [&](int index) { return element_of(v, tensor, ir::var_ref(f_, index)); });
}

// Element `index` of a vector held stacked: a slice of the held tensor, or a piece of it.
ExprPtr StackedListLowering::element_of(const Stacked& v, const clang::CXXRecordDecl* tensor, ExprPtr index) {
  if (v.pieces)
    return piece_at(*v.pieces, ir::var_ref(f_, v.var), piece_n(v), ir::var_ref(f_, v.piece_dim), std::move(index));
  return select_of(tensor, v.var, ir::opaque("0", ir::Type::Int), std::move(index));
}

// The n of a vector of pieces: its variable, or a list of sizes as written (lowered again).
ExprPtr StackedListLowering::piece_n(const Stacked& v) { return v.piece_n >= 0 ? ir::var_ref(f_, v.piece_n) : lower_expr(v.pieces->n); }

}  // namespace funcgen::lower
