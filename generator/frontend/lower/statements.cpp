#include "frontend/lower/statements.h"

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

bool tensor_assignment(const clang::Expr* e);
const clang::Expr* bare_expr(const clang::Expr* e);

// Whether a case label of the switch whose body is `s` stands inside a block (or other statement)
// of the body rather than in the body itself or after another label (`case 0: { ...; case 1: ... }`).
bool nested_label(const clang::Stmt* s, bool top) {
  if (const auto* label = llvm::dyn_cast_or_null<clang::SwitchCase>(s)) return nested_label(label->getSubStmt(), top);
  if (const auto* c = llvm::dyn_cast_or_null<clang::CompoundStmt>(s); c != nullptr && top)
    return std::any_of(c->body_begin(), c->body_end(), [](const clang::Stmt* x) { return nested_label(x, false); });
  return has_case_label(s);
}

// (a case's label block too: what follows it up to the next label is dead)
bool ends_in_return(const ir::Stmt& st) {
  if (st.kind == StmtKind::Return) return true;
  return st.kind == StmtKind::Block && !st.body.empty() && ends_in_return(*st.body.back());
}

// A statement kind the lowering has no IR for, as a C++ user calls it.
std::string statement_words(const clang::Stmt* s) {
  if (llvm::isa<clang::CXXForRangeStmt>(s)) return "a range-based for loop";
  if (llvm::isa<clang::CXXTryStmt>(s)) return "a try block";
  if (llvm::isa<clang::AsmStmt>(s)) return "inline assembly";
  if (llvm::isa<clang::CoroutineBodyStmt>(s) || llvm::isa<clang::CoreturnStmt>(s)) return "a coroutine statement";
  return "this statement";
}

std::string statement_advice(const clang::Stmt* s) {
  if (llvm::isa<clang::CXXForRangeStmt>(s))
    return "loop over an index instead (for (size_t i = 0; i < v.size(); ++i) ... v[i])";
  if (llvm::isa<clang::CXXTryStmt>(s)) return "handle errors outside the transformed function";
  return "write it with if, loops and fg ops";
}

// The IR type of element `i` of a std::tuple or std::pair type (Other where it is not one).
ir::Type element_type(clang::QualType t, size_t i) {
  const auto* spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(bare(t)->getAsCXXRecordDecl());
  if (spec == nullptr) return ir::Type::Other;
  std::vector<clang::QualType> items;
  for (const clang::TemplateArgument& a : spec->getTemplateArgs().asArray()) {
    if (a.getKind() == clang::TemplateArgument::Pack) {
      for (const clang::TemplateArgument& p : a.pack_elements()) items.push_back(p.getAsType());
    } else if (a.getKind() == clang::TemplateArgument::Type) {
      items.push_back(a.getAsType());
    }
  }
  return i < items.size() ? ir_type_of(items[i]) : ir::Type::Other;
}

}  // namespace

// ------------------------------------------------------------------ statements

void StatementLowering::append(std::vector<StmtPtr>& out, const clang::Stmt* s) {
  if (s == nullptr || llvm::isa<clang::NullStmt>(s)) return;
  // A label is only a goto's target (goto is reported); attributes ([[likely]]) are hints.
  if (const auto* l = llvm::dyn_cast<clang::LabelStmt>(s)) return append(out, l->getSubStmt());
  if (const auto* a = llvm::dyn_cast<clang::AttributedStmt>(s)) return append(out, a->getSubStmt());
  if (llvm::isa<clang::Expr>(s) || llvm::isa<clang::ReturnStmt>(s)) hoist_init_captures(out, s);
  if (llvm::isa<clang::Expr>(s) || llvm::isa<clang::ReturnStmt>(s)) join_lists(out, s);
  if (const auto* i = llvm::dyn_cast<clang::IfStmt>(s); i != nullptr && i->getInit() == nullptr)
    join_lists(out, i->getCond());  // (run once, before either branch)
  if (const auto* ds = llvm::dyn_cast<clang::DeclStmt>(s)) {
    for (const clang::Decl* d : ds->decls()) {
      if (const auto* vd = llvm::dyn_cast<clang::VarDecl>(d)) {  // (each in turn)
        hoist_init_captures(out, vd->getInit());
        join_lists(out, vd->getInit());
        if (hoist_declaration(vd, ds, out)) continue;
      }
      lower_decl(out, d, ds);
    }
    return;
  }
  if (const auto* e = llvm::dyn_cast<clang::Expr>(s); e != nullptr && (assign_structure(out, e) || fill_structure(out, e)))
    return;
  if (const auto* e = llvm::dyn_cast<clang::Expr>(s); e != nullptr && !uses_rejected(e)) {
    const clang::Expr* root = bare_expr(e);
    if (tensor_assignment(root) ? hoistable(llvm::cast<clang::CXXOperatorCallExpr>(root)->getArg(1)) : hoistable(root))
      return hoist_statement(e, out);
  }
  if (StmtPtr lowered = lower_stmt(s)) out.push_back(std::move(lowered));
}

// `s = cell(p, x, s);` or `o.state = s;`: a local structure (or a part of one) assigned leaf by leaf.
bool StatementLowering::assign_structure(std::vector<StmtPtr>& out, const clang::Expr* e) {
  const clang::Expr* lhs = nullptr;
  const clang::Expr* rhs = nullptr;
  std::string op;
  if (trees_.empty() || !assignment_sides(e, lhs, rhs, op) || op != "=") return false;
  pytree::Tree* node = resolve(lhs, false);
  if (node == nullptr || node->is_leaf() || !writable(*node, e)) return false;
  init_leaves(*node, lhs->getType(), rhs, false, e, out);
  return true;
}

// `a.fill(v);` on a std::array of tensors held leaf by leaf: each element assigned v (evaluated once).
bool StatementLowering::fill_structure(std::vector<StmtPtr>& out, const clang::Expr* e) {
  const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(strip(e));
  if (trees_.empty() || mc == nullptr || mc->getMethodDecl() == nullptr || mc->getMethodDecl()->getName() != "fill" ||
      mc->getNumArgs() != 1)
    return false;
  pytree::Tree* node = resolve(mc->getImplicitObjectArgument(), false);
  if (node == nullptr || node->kind != pytree::Tree::Kind::Array || node->children.empty() ||
      std::any_of(node->children.begin(), node->children.end(), [](const pytree::Tree& c) { return c.kind != pytree::Tree::Kind::Tensor; }) ||
      !writable(*node, e))
    return false;
  const int value = declare_made(out, e, fresh_name(f_.var(node->children.at(0).var).name + "_fill"), ir::Type::Tensor,
                                 "const fg::Tensor", lower_expr(mc->getArg(0)));
  for (const pytree::Tree& leaf : node->children) assign_made(out, e, leaf.var, value);
  return true;
}

// A block's statements, up to a return that always runs (`if (!b) return y;` folded in a
// specialization where b holds no tensor): what follows it is dead there, and may read b.
void StatementLowering::append_block(std::vector<StmtPtr>& out, const clang::CompoundStmt* c) {
  for (auto it = c->body_begin(); it != c->body_end(); ++it) {
    append(out, *it);
    if (out.empty() || !ends_in_return(*out.back())) continue;
    if (!case_after(it, c->body_end())) return splice_last_block(out);
    while (std::next(it) != c->body_end() && !has_case_label(*std::next(it))) ++it;  // dead up to the next case
  }
}

// A switch body with labels inside its blocks, as one list of labels and statements: entering at
// a label inside a block runs the rest of the block, then what follows it, which is what the list
// does. A label inside an if or a loop (Duff's device) is reported.
bool StatementLowering::flat_switch_body(const clang::Stmt* s, std::vector<StmtPtr>& out) {
  if (s == nullptr || llvm::isa<clang::NullStmt>(s)) return true;
  if (const auto* label = llvm::dyn_cast<clang::SwitchCase>(s)) {
    StmtPtr st = make(StmtKind::Case, s);
    const auto* cs = llvm::dyn_cast<clang::CaseStmt>(label);
    st->text = cs != nullptr ? "case " + text_of(cs->getLHS()) : "default";
    out.push_back(std::move(st));
    return flat_switch_body(label->getSubStmt(), out);
  }
  if (const auto* c = llvm::dyn_cast<clang::CompoundStmt>(s); c != nullptr && has_case_label(c)) {
    for (const clang::Stmt* x : c->body())
      if (!flat_switch_body(x, out)) return false;
    return true;
  }
  if (has_case_label(s)) {
    const std::string what = llvm::isa<clang::IfStmt>(s) ? "an if" : llvm::isa<clang::CompoundStmt>(s) ? "a block" : "a loop";
    unsupported(s, what + " with a case label of its switch inside cannot be transformed; end the " +
                   what.substr(what.find(' ') + 1) + " before the label, or repeat its code under each label");
    return false;
  }
  append(out, s);
  return true;
}

// The same on the source, where discover() walks it: a statement after which nothing runs in
// this specialization.
bool StatementLowering::always_returns(const clang::Stmt* s) {
  if (llvm::isa_and_nonnull<clang::ReturnStmt>(s)) return true;
  if (const auto* label = llvm::dyn_cast_or_null<clang::SwitchCase>(s)) return always_returns(label->getSubStmt());
  if (const auto* c = llvm::dyn_cast_or_null<clang::CompoundStmt>(s)) {
    for (auto it = c->body_begin(); it != c->body_end(); ++it)
      if (always_returns(*it) && !case_after(it, c->body_end())) return true;
    return false;
  }
  if (const auto* i = llvm::dyn_cast_or_null<clang::IfStmt>(s); i != nullptr && i->getInit() == nullptr &&
                                                                 i->getConditionVariable() == nullptr)
    if (const std::optional<bool> taken = presence_test(i->getCond())) return always_returns(*taken ? i->getThen() : i->getElse());
  if (const auto* sw = llvm::dyn_cast_or_null<clang::SwitchStmt>(s))
    if (const std::optional<std::vector<const clang::Stmt*>> taken = known_case(sw))
      return std::any_of(taken->begin(), taken->end(), [&](const clang::Stmt* x) { return always_returns(x); });
  return false;
}

// A block that ends in the return of the list it closes joins that list (the transforms find a
// function's return last in its body), unless it declares a name the list declares too.
void StatementLowering::splice_last_block(std::vector<StmtPtr>& out) {
  if (out.back()->kind != StmtKind::Block || out.back()->text == "label") return;
  std::set<std::string> declared = ir::declared_names(f_, out);  // (the block itself declares none)
  for (int p : f_.params) declared.insert(f_.var(p).name);
  for (const std::string& n : ir::declared_names(f_, out.back()->body))
    if (declared.count(n) != 0) return;
  std::vector<StmtPtr> body = std::move(out.back()->body);
  out.pop_back();
  for (StmtPtr& st : body) out.push_back(std::move(st));
  if (!out.empty() && out.back()->kind == StmtKind::Block) splice_last_block(out);
}

std::vector<StmtPtr> StatementLowering::lower_body(const clang::Stmt* s) {
  std::vector<StmtPtr> out;
  if (const auto* c = llvm::dyn_cast_or_null<clang::CompoundStmt>(s)) {
    append_block(out, c);
  } else {
    append(out, s);
  }
  return out;
}

StmtPtr StatementLowering::lower_stmt(const clang::Stmt* s) {
  if (const auto* c = llvm::dyn_cast<clang::CompoundStmt>(s)) {
    StmtPtr st = make(StmtKind::Block, s);
    append_block(st->body, c);
    return st;
  }
  if (const auto* r = llvm::dyn_cast<clang::ReturnStmt>(s)) {
    StmtPtr st = make(StmtKind::Return, s);
    if (r->getRetValue() != nullptr && !returns_its_object(f_.decl)) st->expr = lower_result(r->getRetValue());
    return st;
  }
  if (const auto* i = llvm::dyn_cast<clang::IfStmt>(s)) {
    if (i->getInit() != nullptr || i->getConditionVariable() != nullptr || i->isConstexpr()) {
      if (!needs_ir(s)) return opaque_stmt(s);
      if (i->isConstexpr()) return taken_branch(i);
      // if (init; T v = e) ...  ->  { init; T v = e; if (v) ... }: the names are the if's alone either way
      StmtPtr block = make(StmtKind::Block, s);
      if (i->getInit() != nullptr) append(block->body, i->getInit());
      if (i->getConditionVariableDeclStmt() != nullptr) append(block->body, i->getConditionVariableDeclStmt());
      block->body.push_back(lower_if(i));
      return block;
    }
    if (hoistable(i->getCond())) return hoisted_condition(i, i->getCond(), StmtKind::If);
    if (const std::optional<bool> taken = presence_test(i->getCond())) {  // `if (b)`: one branch in this specialization
      const clang::Stmt* branch = *taken ? i->getThen() : i->getElse();
      if (branch == nullptr) return nullptr;
      StmtPtr st = make(StmtKind::Block, branch);
      st->body = lower_body(branch);
      return st;
    }
    return lower_if(i);
  }
  if (const auto* fs = llvm::dyn_cast<clang::ForStmt>(s)) {
    if (fs->getCond() != nullptr && hoistable(fs->getCond())) return hoisted_condition(fs, fs->getCond(), StmtKind::For);
    StmtPtr st = make(StmtKind::For, s);
    if (fs->getInit() != nullptr) append(st->init, fs->getInit());
    if (fs->getCond() != nullptr) st->expr = lower_expr(fs->getCond());
    if (fs->getInc() != nullptr) st->step = lower_expr(fs->getInc());
    ++loops_;
    st->body = lower_body(fs->getBody());
    --loops_;
    return st;
  }
  if (const auto* w = llvm::dyn_cast<clang::WhileStmt>(s)) {
    StmtPtr st = make(StmtKind::While, s);
    ++loops_;
    if (w->getConditionVariable() != nullptr) {
      // while (T v = e) body  ->  while (true) { T v = e; if (!v) break; body }: a continue
      // evaluates the condition again, as C++ does
      st->expr = ir::opaque("true", ir::Type::Bool);
      append(st->body, w->getConditionVariableDeclStmt());
      st->body.push_back(exit_unless(w->getCond(), s));
      for (StmtPtr& b : lower_body(w->getBody())) st->body.push_back(std::move(b));
    } else if (hoistable(w->getCond())) {
      --loops_;
      return hoisted_condition(w, w->getCond(), StmtKind::While);
    } else {
      st->expr = lower_expr(w->getCond());
      st->body = lower_body(w->getBody());
    }
    --loops_;
    return st;
  }
  if (const auto* d = llvm::dyn_cast<clang::DoStmt>(s)) {
    StmtPtr st = make(StmtKind::DoWhile, s);
    st->expr = lower_expr(d->getCond());
    ++loops_;
    st->body = lower_body(d->getBody());
    --loops_;
    return st;
  }
  if (const auto* sw = llvm::dyn_cast<clang::SwitchStmt>(s)) {
    if (const std::optional<std::vector<const clang::Stmt*>> taken = known_case(sw)) {  // one case, in a level
      StmtPtr block = make(StmtKind::Block, s);
      for (const clang::Stmt* x : *taken) {
        append(block->body, x);
        if (!block->body.empty() && ends_in_return(*block->body.back())) break;
      }
      return block;
    }
    if (sw->getInit() != nullptr || sw->getConditionVariable() != nullptr) {
      // switch (init; T c = e) ...  ->  { init; T c = e; switch (c) ... }
      StmtPtr block = make(StmtKind::Block, s);
      if (sw->getInit() != nullptr) append(block->body, sw->getInit());
      if (sw->getConditionVariableDeclStmt() != nullptr) append(block->body, sw->getConditionVariableDeclStmt());
      if (StmtPtr inner = lower_switch(sw)) block->body.push_back(std::move(inner));
      return ok_ ? std::move(block) : nullptr;
    }
    return lower_switch(sw);
  }
  if (const auto* cs = llvm::dyn_cast<clang::CaseStmt>(s)) {
    // A case label owns the statement after it; flatten to label + statement in the block.
    StmtPtr st = make(StmtKind::Case, s);
    st->text = "case " + text_of(cs->getLHS());
    pending_after_label_ = cs->getSubStmt();
    return flatten_label(std::move(st));
  }
  if (const auto* ds = llvm::dyn_cast<clang::DefaultStmt>(s)) {
    StmtPtr st = make(StmtKind::Case, s);
    st->text = "default";
    pending_after_label_ = ds->getSubStmt();
    return flatten_label(std::move(st));
  }
  if (llvm::isa<clang::BreakStmt>(s)) return make(StmtKind::Break, s);
  if (llvm::isa<clang::ContinueStmt>(s)) return make(StmtKind::Continue, s);
  if (const auto* e = llvm::dyn_cast<clang::Expr>(s)) return lower_expr_stmt(e);
  // The generated code declares values between statements (temporaries, aligned operands), and
  // a jump may not skip declarations: goto is reported wherever it is.
  if (llvm::isa<clang::GotoStmt>(s) || llvm::isa<clang::IndirectGotoStmt>(s)) {
    unsupported(s, "goto cannot be transformed; use if, a loop with break or continue, or return instead");
    return nullptr;
  }
  if (!needs_ir(s)) return opaque_stmt(s);
  if (const auto* rs = llvm::dyn_cast<clang::CXXForRangeStmt>(s))
    if (StmtPtr st = lower_range_for(rs)) return st;
  if (!ok_) return nullptr;
  unsupported(s, statement_words(s) + " that uses tensors cannot be transformed; " + statement_advice(s));
  return nullptr;
}

StmtPtr StatementLowering::lower_if(const clang::IfStmt* i) {
  StmtPtr st = make(StmtKind::If, i);
  st->expr = lower_expr(i->getCond());
  st->body = lower_body(i->getThen());
  if (i->getElse() != nullptr) {
    st->has_else = true;
    st->else_body = lower_body(i->getElse());
  }
  return st;
}

// `if constexpr`: the branch its condition takes (the other may not even compile here).
StmtPtr StatementLowering::taken_branch(const clang::IfStmt* i) {
  const std::optional<llvm::APSInt> taken = i->getCond()->getIntegerConstantExpr(context_);
  if (!taken) {
    unsupported(i, "an 'if constexpr' whose condition depends on a template parameter cannot be transformed; "
                   "annotate a function that calls the instance it needs");
    return nullptr;
  }
  StmtPtr block = make(StmtKind::Block, i);
  const clang::Stmt* branch = taken->getBoolValue() ? i->getThen() : i->getElse();
  if (i->getInit() != nullptr) append(block->body, i->getInit());
  if (branch != nullptr)
    for (StmtPtr& b : lower_body(branch)) block->body.push_back(std::move(b));
  return block;
}

// if (!(cond)) break;
StmtPtr StatementLowering::exit_unless(const clang::Expr* cond, const clang::Stmt* at) {
  StmtPtr exit = make(StmtKind::If, at);
  exit->expr = ir::unary("!", lower_expr(cond), ir::Type::Bool);
  exit->body.push_back(make(StmtKind::Break, at));
  return exit;
}

StmtPtr StatementLowering::lower_switch(const clang::SwitchStmt* sw) {
  StmtPtr st = make(StmtKind::Switch, sw);
  st->expr = lower_expr(sw->getCond());
  if (nested_label(sw->getBody(), true)) {
    if (!flat_switch_body(sw->getBody(), st->body)) return nullptr;
    std::set<std::string> names;
    for (const StmtPtr& d : st->body)
      if (d->kind == StmtKind::Decl && !names.insert(f_.var(d->var).name).second) {
        unsupported(d->ast, "'" + f_.var(d->var).name + "' is declared twice in the blocks of this switch that "
                            "case labels enter, which cannot be transformed; rename one of them");
        return nullptr;
      }
  } else {
    st->body = lower_body(sw->getBody());
  }
  return st;
}

// `case 1: stmt` becomes a Block holding the label and the statement, so that blocks stay flat.
StmtPtr StatementLowering::flatten_label(StmtPtr label) {
  const clang::Stmt* sub = pending_after_label_;
  pending_after_label_ = nullptr;
  StmtPtr block = std::make_unique<ir::Stmt>();
  block->kind = StmtKind::Block;
  block->range = label->range;
  block->text = "label";
  block->body.push_back(std::move(label));
  append(block->body, sub);
  return block;
}

// assert(cond): the condition is lowered (under vmap, x.dim() is each example's), and the
// statement printed as assert(...) again, so that NDEBUG decides when the generated code is built.
// (Its text as written would read the batched tensors if funcgen saw NDEBUG and the build not.)
bool StatementLowering::is_assert(const clang::Expr* e) const {
  for (clang::SourceLocation loc = e->getBeginLoc(); loc.isMacroID(); loc = sm_.getImmediateMacroCallerLoc(loc))
    if (clang::Lexer::getImmediateMacroName(loc, sm_, context_.getLangOpts()) == "assert") return true;
  return false;
}

StmtPtr StatementLowering::lower_assert(const clang::Expr* e) {
  // With NDEBUG the macro expands to no condition: nothing to run.
  const auto* check = llvm::dyn_cast<clang::ConditionalOperator>(strip(e));
  if (check == nullptr) return nullptr;
  const clang::Expr* cond = check->getCond()->IgnoreImpCasts();
  if (const auto* cast = llvm::dyn_cast<clang::CXXStaticCastExpr>(cond)) cond = cast->getSubExpr();
  if (!sm_.isMacroArgExpansion(cond->getBeginLoc())) {
    unsupported(e, "this assert cannot be transformed; check the condition with an if before calling the function");
    return nullptr;
  }
  StmtPtr st = make(StmtKind::Eval, e);
  ExprPtr call = make_expr(ExprKind::Call, e);
  call->form = ir::CallForm::External;
  call->op = "assert";
  call->args.push_back(lower_expr(cond));
  call->params.push_back("");
  call->param_types.push_back(call->args.back()->type);
  st->expr = std::move(call);
  return st;
}

// std::tie(a, b) = e;  ->  { auto [a_tied__, b_tied__] = e; a = a_tied__; b = b_tied__; }
// (std::ignore takes its element nowhere).
StmtPtr StatementLowering::lower_tie(const clang::Expr* e, const clang::CallExpr* tie, const clang::Expr* value) {
  StmtPtr block = make(StmtKind::Block, e);
  StmtPtr bind = make(StmtKind::Bind, e);
  bind->text = "auto";
  bind->expr = lower_expr(value);
  std::vector<StmtPtr> assigns;
  for (const clang::Expr* arg : tie->arguments()) {
    const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(strip(arg));
    auto it = ref != nullptr ? vars_.find(ref->getDecl()) : vars_.end();
    const bool ignored = ref != nullptr && ref->getDecl()->getQualifiedNameAsString() == "std::ignore";
    if (!ignored && it == vars_.end()) {
      unsupported(arg, "std::tie of something other than a local variable or std::ignore cannot be transformed; "
                       "bind the values with auto [a, b] = ... and assign them");
      return nullptr;
    }
    const std::string name = ignored ? "ignored" + std::to_string(bind->vars.size()) : f_.var(it->second).name;
    const ir::Type type = ignored ? element_type(value->getType(), bind->vars.size()) : f_.var(it->second).type;
    const int tied = generated_var(name + "_tied__", type, "auto");
    bind->vars.push_back(tied);
    if (ignored) continue;
    StmtPtr a = make(StmtKind::Assign, e);
    a->var = it->second;
    a->text = "=";
    a->expr = ir::var_ref(f_, tied);
    assigns.push_back(std::move(a));
  }
  block->body.push_back(std::move(bind));
  for (StmtPtr& a : assigns) block->body.push_back(std::move(a));
  return block;
}

StmtPtr StatementLowering::lower_expr_stmt(const clang::Expr* e) {
  // A statement on a variable that was reported (`p = &b;` of a pointer that cannot be followed):
  // its other parts are not reported again. (The function has failed: nothing is generated.)
  if (uses_rejected(e)) return make(StmtKind::Block, e);
  if (retargets(e)) return make(StmtKind::Block, e);  // (nothing to compute: the pointer names another variable)
  if (is_assert(e)) return lower_assert(e);
  if (const auto* mc = llvm::dyn_cast<clang::CXXMemberCallExpr>(strip(e))) {
    if (Stacked* v = stacked_object(mc); v != nullptr && is_push(mc)) return push(*v, mc);
    if (Stacked* v = stacked_object(mc); v != nullptr && mc->getMethodDecl()->getName() == "reserve")
      return make(StmtKind::Block, e);  // no storage to reserve: an empty block
    if (const clang::VarDecl* v = listed_object(mc); v != nullptr && is_push(mc)) return push_listed(v, mc);
    if (listed_object(mc) != nullptr && mc->getMethodDecl()->getName() == "reserve")
      return opaque_stmt(e);  // kept: it only sizes the storage
  }
  if (StmtPtr st = assign_listed(e)) return st;
  if (StmtPtr st = lower_swap(e)) return st;
  // var = expr / var op= expr on a local: an assignment, whatever the type.
  const clang::Expr* lhs = nullptr;
  const clang::Expr* rhs = nullptr;
  std::string op;
  assignment_sides(e, lhs, rhs, op);
  if (lhs != nullptr && op == "=")
    if (const auto* tie = llvm::dyn_cast<clang::CallExpr>(strip(lhs));
        tie != nullptr && tie->getDirectCallee() != nullptr && tie->getDirectCallee()->getQualifiedNameAsString() == "std::tie")
      return lower_tie(e, tie, rhs);
  if (lhs != nullptr) {
    if (const pytree::Tree* leaf = resolve(lhs, false); leaf != nullptr && leaf->is_leaf() && writable(*leaf, e)) {
      StmtPtr st = make(StmtKind::Assign, e);  // `s.h = ...;`: its leaf's variable
      st->var = leaf->var;
      st->text = op;
      st->expr = lower_expr(rhs);
      return st;
    }
    if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(strip(lhs))) {  // (`*p = ...` too: tensor_pointer)
      if (auto it = vars_.find(ref->getDecl()); it != vars_.end()) {
        StmtPtr st = make(StmtKind::Assign, e);
        st->var = it->second;
        st->text = op;
        st->expr = lower_expr(rhs);
        return st;
      }
    }
  }
  if (lhs != nullptr && op == "=")
    if (const auto* get = llvm::dyn_cast<clang::CallExpr>(strip(lhs)); get != nullptr && get->getDirectCallee() != nullptr &&
                                                                    get->getDirectCallee()->getQualifiedNameAsString() == "std::get" &&
                                                                    ir_type_of(get->getArg(0)->getType()) == ir::Type::TensorTuple) {
      unsupported(e, "an element of the std::tuple '" + text_of(get->getArg(0)) + "' cannot be assigned yet; hold the "
                     "tensors in a struct, std::pair or std::array (funcgen keeps each in a variable of its own) or "
                     "in separate variables");
      return nullptr;
    }
  if (!helper_call(e) && !needs_ir(e)) return opaque_stmt(e);
  StmtPtr st = make(StmtKind::Eval, e);
  st->expr = lower_expr(e);
  return st;
}

}  // namespace funcgen::lower

namespace funcgen::lower {

namespace {

// `y = v` on a tensor, evaluated for its value (not a statement of its own).
bool tensor_assignment(const clang::Expr* e) {
  const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e);
  return oc != nullptr && oc->getOperator() == clang::OO_Equal && oc->getNumArgs() == 2 && is_fg_tensor(oc->getArg(0)->getType());
}

// `y += v`, `y *= v`, ...: an in-place op on the tensor y (the one operator_op names), whose value is y.
bool tensor_compound_assignment(const clang::Expr* e) {
  const auto* oc = llvm::dyn_cast<clang::CXXOperatorCallExpr>(e);
  return oc != nullptr && oc->getNumArgs() == 2 && oc->isAssignmentOp() && oc->getOperator() != clang::OO_Equal &&
         operator_op(oc->getOperator(), false) != nullptr && is_fg_tensor(oc->getArg(0)->getType());
}

const clang::Expr* bare_expr(const clang::Expr* e) {
  e = e->IgnoreImplicit()->IgnoreParens();
  if (const auto* w = llvm::dyn_cast<clang::ExprWithCleanups>(e)) return bare_expr(w->getSubExpr());
  if (const auto* m = llvm::dyn_cast<clang::MaterializeTemporaryExpr>(e)) return bare_expr(m->getSubExpr());
  if (const auto* c = llvm::dyn_cast<clang::CXXConstructExpr>(e);  // (a copy of the assigned tensor)
      c != nullptr && c->getNumArgs() == 1 && c->getConstructor()->isCopyOrMoveConstructor())
    return bare_expr(c->getArg(0));
  return e != nullptr && e != e->IgnoreImplicit()->IgnoreParens() ? bare_expr(e) : e;
}

bool lazy(const clang::Expr* e) {
  const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e);
  return llvm::isa<clang::ConditionalOperator>(e) ||
         (b != nullptr && (b->getOpcode() == clang::BO_LAnd || b->getOpcode() == clang::BO_LOr || b->getOpcode() == clang::BO_Comma));
}

}  // namespace

// Whether `e` assigns a tensor inside it (`y = v`, `y += v`; outside lambdas), where the IR has no
// expression for it.
bool StatementLowering::assigns_inside(const clang::Expr* e) const {
  struct Finder : clang::RecursiveASTVisitor<Finder> {
    bool found = false;
    bool TraverseLambdaExpr(clang::LambdaExpr*) { return true; }
    bool VisitCXXOperatorCallExpr(clang::CXXOperatorCallExpr* c) {
      found = found || tensor_assignment(c) || tensor_compound_assignment(c);
      return !found;
    }
  } finder;
  finder.TraverseStmt(const_cast<clang::Expr*>(e));
  return finder.found;
}

// Whether `e` is a tensor's assignment, or a &&, ||, ?: or comma, with assignments inside: what the
// lowering hoists (other expressions with them inside are reported where they are differentiated).
bool StatementLowering::hoistable(const clang::Expr* e) const {
  const clang::Expr* root = bare_expr(e);
  return (lazy(root) || tensor_assignment(root)) && assigns_inside(root);
}

// An expression statement with assignments inside: `a ? (y = u) : (y = v);` is an if, `a && (y = u,
// true);` an if on a, `(y = u), z = v;` two statements.
void StatementLowering::hoist_statement(const clang::Expr* e, std::vector<StmtPtr>& out) {
  e = bare_expr(e);
  const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e);
  if (b != nullptr && b->getOpcode() == clang::BO_Comma) {
    append(out, bare_expr(b->getLHS()));
    append(out, bare_expr(b->getRHS()));
    return;
  }
  const auto* c = llvm::dyn_cast<clang::ConditionalOperator>(e);
  if (c != nullptr || (b != nullptr && (b->getOpcode() == clang::BO_LAnd || b->getOpcode() == clang::BO_LOr))) {
    StmtPtr st = make(StmtKind::If, e);
    ExprPtr cond = hoisted(c != nullptr ? c->getCond() : b->getLHS(), out);
    st->expr = b != nullptr && b->getOpcode() == clang::BO_LOr ? ir::unary("!", std::move(cond), ir::Type::Bool) : std::move(cond);
    append(st->body, bare_expr(c != nullptr ? c->getTrueExpr() : b->getRHS()));
    if (c != nullptr) {
      st->has_else = true;
      append(st->else_body, bare_expr(c->getFalseExpr()));
    }
    out.push_back(std::move(st));
    return;
  }
  ExprPtr value = hoisted(e, out);
  if (value->kind != ExprKind::VarRef && value->kind != ExprKind::Opaque) {
    StmtPtr st = make(StmtKind::Eval, e);
    st->expr = std::move(value);
    out.push_back(std::move(st));
  }
}

// The value of `e`, with the assignments inside it as statements before it in out.
ExprPtr StatementLowering::hoisted(const clang::Expr* original, std::vector<StmtPtr>& out) {
  if (!assigns_inside(original)) return lower_expr(original);
  const clang::Expr* e = bare_expr(original);
  if (const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e); b != nullptr && b->getOpcode() == clang::BO_Comma) {
    append(out, bare_expr(b->getLHS()));
    return hoisted(b->getRHS(), out);
  }
  if (lazy(e)) {  // a variable of its own, assigned where C++ evaluates each side
    const ir::Type type = ir_type_of(e->getType());
    StmtPtr decl = make(StmtKind::Decl, e);
    decl->var = generated_var(fresh_name(type == ir::Type::Bool ? "taken__" : "chosen__"), type,
                              type == ir::Type::Tensor ? "fg::Tensor" : cxx_spelling(e->getType().getUnqualifiedType(), context_));
    const int var = decl->var;
    assign_hoisted(var, std::move(decl), e, out);
    return ir::var_ref(f_, var);
  }
  if (tensor_assignment(e)) {  // `y = v`: the statement, then y
    const auto* oc = llvm::cast<clang::CXXOperatorCallExpr>(e);
    const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(strip(oc->getArg(0)));
    auto it = ref != nullptr ? vars_.find(ref->getDecl()) : vars_.end();
    if (it != vars_.end()) {
      StmtPtr st = make(StmtKind::Assign, e);
      st->var = it->second;
      st->text = "=";
      st->expr = hoisted(oc->getArg(1), out);
      out.push_back(std::move(st));
      return lower_expr(oc->getArg(0));
    }
  }
  if (tensor_compound_assignment(e) && !assigns_inside(llvm::cast<clang::CXXOperatorCallExpr>(e)->getArg(1))) {
    append(out, e);  // `y += v`: the statement (the in-place op), then y
    return lower_expr(llvm::cast<clang::CXXOperatorCallExpr>(e)->getArg(0));
  }
  return lower_expr(original);  // (an assignment inside another expression is reported where it is differentiated)
}

// var = e, where e has assignments inside: `t = a; if (t) t = b;` for a && b, `if (c) t = u; else t
// = v;` for c ? u : v. `decl`: var's declaration, given the first value (null: var is declared).
void StatementLowering::assign_hoisted(int var, StmtPtr decl, const clang::Expr* original, std::vector<StmtPtr>& out) {
  const clang::Expr* e = bare_expr(original);
  const auto assign = [&](ExprPtr value, std::vector<StmtPtr>& to) {
    if (decl) {
      decl->expr = std::move(value);
      to.push_back(std::move(decl));
      return;
    }
    StmtPtr st = make(StmtKind::Assign, e);
    st->var = var;
    st->text = "=";
    st->expr = std::move(value);
    to.push_back(std::move(st));
  };
  const auto* b = llvm::dyn_cast<clang::BinaryOperator>(e);
  const auto* c = llvm::dyn_cast<clang::ConditionalOperator>(e);
  if (!assigns_inside(e) || !lazy(e) || (b != nullptr && b->getOpcode() == clang::BO_Comma)) {
    assign(hoisted(original, out), out);
    return;
  }
  StmtPtr st = make(StmtKind::If, e);
  if (c != nullptr) {
    st->expr = hoisted(c->getCond(), out);
    if (decl) out.push_back(std::move(decl));  // (declared without a value: each branch gives it one)
    assign_hoisted(var, nullptr, c->getTrueExpr(), st->body);
    st->has_else = true;
    assign_hoisted(var, nullptr, c->getFalseExpr(), st->else_body);
  } else {
    ExprPtr first = hoisted(b->getLHS(), out);
    assign(std::move(first), out);
    st->expr = ir::var_ref(f_, var);
    if (b->getOpcode() == clang::BO_LOr) st->expr = ir::unary("!", std::move(st->expr), ir::Type::Bool);
    assign_hoisted(var, nullptr, b->getRHS(), st->body);
  }
  out.push_back(std::move(st));
}

// `bool b = a && ((y = y * 2), true);`, `fg::Tensor z = a ? (y = u) : (y = v);`: b (z) declared, and
// assigned as assign_hoisted does. (Of a plain number or tensor variable; others are not hoisted.)
bool StatementLowering::hoist_declaration(const clang::VarDecl* vd, const clang::DeclStmt* ds, std::vector<StmtPtr>& out) {
  const clang::Expr* init = vd->getInit();
  const ir::Type type = ir_type_of(vd->getType());
  if (init == nullptr || vd->getType()->isReferenceType() || !hoistable(init) ||
      !(type == ir::Type::Tensor || ir::is_scalar(type)) || vars_.count(vd) != 0)
    return false;
  StmtPtr decl = make(StmtKind::Decl, ds);
  decl->range = vd->getSourceRange();
  // (declared without const: the hoisted statements give it its value after the declaration)
  const int var = decl->var = add_var(vd, vd->getType().getUnqualifiedType());
  assign_hoisted(var, std::move(decl), init, out);
  return true;
}

// `while ((r = r * 0.5), ++k < 4) body` -> `while (true) { r = r * 0.5; if (!(++k < 4)) break; body }`
// (a continue evaluates the condition again, as in C++); `if (a && (y = u, true))` -> the
// assignments before the if, in a block of its own.
StmtPtr StatementLowering::hoisted_condition(const clang::Stmt* s, const clang::Expr* cond, StmtKind kind) {
  StmtPtr st = make(kind == StmtKind::If ? StmtKind::Block : kind, s);
  if (kind == StmtKind::For) {
    const auto* fs = llvm::cast<clang::ForStmt>(s);
    if (fs->getInit() != nullptr) append(st->init, fs->getInit());
    if (fs->getInc() != nullptr) st->step = lower_expr(fs->getInc());
  }
  if (kind != StmtKind::If) {
    st->expr = ir::opaque("true", ir::Type::Bool);
    ++loops_;
  }
  ExprPtr value = hoisted(cond, st->body);
  if (kind == StmtKind::If) {
    const auto* i = llvm::cast<clang::IfStmt>(s);
    StmtPtr branch = make(StmtKind::If, s);
    branch->expr = std::move(value);
    branch->body = lower_body(i->getThen());
    if (i->getElse() != nullptr) {
      branch->has_else = true;
      branch->else_body = lower_body(i->getElse());
    }
    st->body.push_back(std::move(branch));
    return st;
  }
  StmtPtr exit = make(StmtKind::If, cond);
  exit->expr = ir::unary("!", std::move(value), ir::Type::Bool);
  exit->body.push_back(make(StmtKind::Break, cond));
  st->body.push_back(std::move(exit));
  const clang::Stmt* body = kind == StmtKind::For ? llvm::cast<clang::ForStmt>(s)->getBody() : llvm::cast<clang::WhileStmt>(s)->getBody();
  for (StmtPtr& b : lower_body(body)) st->body.push_back(std::move(b));
  --loops_;
  return st;
}

}  // namespace funcgen::lower
