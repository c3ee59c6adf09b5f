#include "transforms/ad/returns.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/Stmt.h>
#include <clang/AST/StmtCXX.h>

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "ir/build.h"
#include "ops/registry.h"

namespace funcgen::ad {

namespace {

using ir::StmtKind;
using ir::StmtPtr;

bool has_return(const std::vector<StmtPtr>& body) {
  bool found = false;
  ir::for_each_stmt(body, [&](const ir::Stmt& s) { found |= s.kind == StmtKind::Return; });
  return found;
}

// Whether every path through `body` ends in a return.
bool always_returns(const std::vector<StmtPtr>& body) {
  if (body.empty()) return false;
  const ir::Stmt& last = *body.back();
  if (last.kind == StmtKind::Return) return true;
  return last.kind == StmtKind::If && last.has_else && always_returns(last.body) && always_returns(last.else_body);
}

// Whether the returns of `body` are all where this pass can move them: in ifs and blocks (a braced
// case), not in loops or switches. What follows a block with a return moves into it, so the two
// may not declare the same name.
bool movable(const ir::Function& fn, const std::vector<StmtPtr>& body) {
  for (size_t i = 0; i < body.size(); ++i) {
    const ir::Stmt& s = *body[i];
    if (s.kind == StmtKind::If && !(movable(fn, s.body) && movable(fn, s.else_body))) return false;
    if (s.kind == StmtKind::Block && has_return(s.body)) {
      if (!movable(fn, s.body)) return false;
      const std::set<std::string> inside = ir::declared_names(fn, s.body), after = ir::declared_names(fn, body, i + 1);
      for (const std::string& n : inside)
        if (after.count(n) != 0) return false;
    }
    if (s.kind != StmtKind::If && s.kind != StmtKind::Block && has_return(s.body)) return false;
  }
  return true;
}

class Rewriter {
 public:
  explicit Rewriter(std::vector<int> results) : results_(std::move(results)) {}

  std::vector<StmtPtr> rewrite(std::vector<StmtPtr> stmts) {
    std::vector<StmtPtr> out;
    for (size_t i = 0; i < stmts.size(); ++i) {
      StmtPtr s = std::move(stmts[i]);
      if (s->kind == StmtKind::Return) {
        assign_results(*s, out);
        return out;  // what follows a return never runs
      }
      if (s->kind == StmtKind::Block && has_return(s->body)) {  // what follows runs inside it, up to its return
        for (size_t k = i + 1; k < stmts.size(); ++k) s->body.push_back(std::move(stmts[k]));
        s->body = rewrite(std::move(s->body));
        out.push_back(std::move(s));
        return out;
      }
      if (s->kind == StmtKind::If && (has_return(s->body) || has_return(s->else_body))) {
        std::vector<StmtPtr> rest;
        for (size_t k = i + 1; k < stmts.size(); ++k) rest.push_back(std::move(stmts[k]));
        const bool then_falls = !always_returns(s->body), else_falls = !always_returns(s->else_body);
        if (then_falls)
          for (auto& r : rest) s->body.push_back(else_falls ? ir::clone(*r) : std::move(r));
        if (else_falls)
          for (auto& r : rest) s->else_body.push_back(std::move(r));
        s->body = rewrite(std::move(s->body));
        s->else_body = rewrite(std::move(s->else_body));
        s->has_else = !s->else_body.empty();
        out.push_back(std::move(s));
        return out;
      }
      out.push_back(std::move(s));
    }
    return out;
  }

 private:
  void assign_results(const ir::Stmt& ret, std::vector<StmtPtr>& out) {
    const ir::Expr& value = *ret.expr;
    for (size_t k = 0; k < results_.size(); ++k) {
      StmtPtr a = ir::assign(results_[k], ir::clone(results_.size() == 1 ? value : value.arg(k)));
      a->range = ret.range;
      a->ast = ret.ast;
      out.push_back(std::move(a));
    }
  }

  std::vector<int> results_;
};

// The number of tensors every return returns (one, or a std::make_tuple of tensors), or 0 when
// the returns differ or return something else.
size_t returned_tensors(const ir::Function& fn) {
  size_t n = 0;
  bool ok = true;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    if (s.kind != StmtKind::Return) return;
    size_t here = 0;
    if (s.expr && s.expr->type == ir::Type::Tensor) here = 1;
    if (s.expr && s.expr->kind == ir::ExprKind::Tuple) {
      here = s.expr->args.size();
      for (const auto& a : s.expr->args) ok &= a->type == ir::Type::Tensor;
    }
    ok &= here != 0 && (n == 0 || n == here);
    n = here;
  });
  return ok ? n : 0;
}

bool is_loop(const ir::Stmt& s) {
  return s.kind == StmtKind::For || s.kind == StmtKind::While || s.kind == StmtKind::DoWhile;
}

// What leaves the loop whose body `s` is in: a break or continue of that loop (not of a loop or a
// switch inside it) or a return.
struct Jumps {
  bool breaks = false, continues = false, returns = false;
  bool through_switch = false;  // a continue or return inside a switch, which this does not rewrite
  bool any() const { return breaks || continues || returns; }
};

void find_jumps(const ir::Stmt& s, Jumps& j, bool in_switch, bool in_loop) {
  if (s.kind == StmtKind::Return) j.returns = true;
  if (s.kind == StmtKind::Break && !in_switch && !in_loop) j.breaks = true;
  if (s.kind == StmtKind::Continue && !in_loop) j.continues = true;
  if ((s.kind == StmtKind::Return || (s.kind == StmtKind::Continue && !in_loop)) && in_switch) j.through_switch = true;
  const bool loop = in_loop || is_loop(s);
  const bool sw = in_switch || s.kind == StmtKind::Switch;
  for (const auto* children : {&s.body, &s.else_body})
    for (const auto& c : *children) find_jumps(*c, j, sw, loop);
}

Jumps jumps_of(const std::vector<StmtPtr>& body) {
  Jumps j;
  for (const auto& s : body) find_jumps(*s, j, false, false);
  return j;
}

// `stmts` rewritten innermost first: each statement, its nested bodies already rewritten, is
// passed to `each`, which appends what replaces it to `out`.
std::vector<StmtPtr> bottom_up(std::vector<StmtPtr> stmts,
                               const std::function<void(StmtPtr, std::vector<StmtPtr>&)>& each) {
  std::vector<StmtPtr> out;
  for (StmtPtr& s : stmts) {
    s->body = bottom_up(std::move(s->body), each);
    s->else_body = bottom_up(std::move(s->else_body), each);
    each(std::move(s), out);
  }
  return out;
}

// Names for the variables a pass adds that no name of the function has (its variables and the
// names its C++ text uses): `base`, else `base` numbered.
class FreshNames {
 public:
  explicit FreshNames(const ir::Function& fn) {
    for (const auto& v : fn.vars) taken_.insert(v.name);
    for (const auto& n : ir::text_names(fn)) taken_.insert(n);
  }
  std::string claim(const std::string& base) {
    std::string n = base;
    for (int i = 1; taken_.count(n) != 0; ++i) n = base + std::to_string(i);
    taken_.insert(n);
    return n;
  }

 private:
  std::set<std::string> taken_;
};

// Whether a loop's condition or step computes tensors.
bool trip_computes_tensors(const ir::ExprPtr& e) { return e && ir::computes_tensors(*e); }

class LoopRewriter {
 public:
  LoopRewriter(ir::Function& fn, size_t results) : fn_(fn), result_count_(results), names_(fn) {}

  bool changed() const { return changed_; }
  const std::vector<int>& declared_results() const { return results_; }

  std::vector<StmtPtr> rewrite(std::vector<StmtPtr> stmts) {  // inner loops first: their returns become ifs here
    return bottom_up(std::move(stmts), [this](StmtPtr s, std::vector<StmtPtr>& out) {
      if (is_loop(*s)) loop(std::move(s), out);
      else out.push_back(std::move(s));
    });
  }

 private:
  struct Flags {
    int broke = -1, skipped = -1, returned = -1;
  };

  void loop(StmtPtr s, std::vector<StmtPtr>& out) {
    Jumps j = jumps_of(s->body);
    // A condition or step that computes tensors becomes statements of the body (the normalizer
    // reports one that stays).
    const bool tested_inside = trip_computes_tensors(s->expr), step_computes = trip_computes_tensors(s->step);
    if ((!j.any() && !step_computes && !tested_inside) || j.through_switch || (j.returns && result_count_ == 0) ||
        !computes_tensors(*s, fn_)) {
      out.push_back(std::move(s));
      return;
    }
    changed_ = true;
    ir::ExprPtr exit_test;  // a do-while's: tested at the end of every trip, one left by `continue` too
    if (tested_inside && s->kind == StmtKind::DoWhile) exit_test = std::move(s->expr);
    else if (tested_inside) leave_inside(*s);
    j.breaks = j.breaks || tested_inside;
    Flags f;
    if (j.breaks || j.returns) f.broke = flag("broke__", out, s->range);
    if (j.returns) f.returned = flag("returned__", out, s->range);
    std::vector<StmtPtr> body;
    if (j.continues) f.skipped = flag("skipped__", body, s->range);
    for (StmtPtr& b : guard(std::move(s->body), f)) body.push_back(std::move(b));
    if (exit_test) {
      std::vector<StmtPtr> test;
      test.push_back(exit_if(std::move(exit_test)));
      test.back()->body.back() = set(f.broke, test.back()->range);
      body.push_back(when_not({f.broke}, std::move(test), s->range));
    }
    if (s->step && f.broke >= 0) {  // a loop that breaks does not step
      std::vector<StmtPtr> step;
      step_statements(std::move(s->step), step);
      body.push_back(when_not({f.broke}, std::move(step), s->range));
    } else if (step_computes) {
      step_statements(std::move(s->step), body);
    }
    s->body = std::move(body);
    if (f.broke >= 0)
      s->expr = s->expr ? ir::binary("&&", negated(f.broke), std::move(s->expr), ir::Type::Bool) : negated(f.broke);
    const clang::SourceRange range = s->range;
    out.push_back(std::move(s));
    if (f.returned >= 0) {
      auto st = std::make_unique<ir::Stmt>();
      st->kind = StmtKind::If;
      st->range = range;
      st->expr = ir::var_ref(fn_, f.returned);
      std::vector<ir::ExprPtr> values;
      for (int r : results()) values.push_back(ir::var_ref(fn_, r));
      st->body.push_back(ir::ret(values.size() == 1 ? std::move(values[0]) : ir::tuple(std::move(values))));
      out.push_back(std::move(st));
    }
  }

  // A loop's step as statements: `++i, z = z * 0.5` is `++i; z = z * 0.5;`.
  void step_statements(ir::ExprPtr step, std::vector<StmtPtr>& out) {
    if (step->kind == ir::ExprKind::Binary && step->text == ",") {
      step_statements(std::move(step->args[0]), out);
      step_statements(std::move(step->args[1]), out);
      return;
    }
    const bool assigns_tensor = step->kind == ir::ExprKind::Call && ops::id(*step) == ops::assign_operator && step->args.size() == 2 &&
                                step->args[0]->kind == ir::ExprKind::VarRef && step->args[0]->type == ir::Type::Tensor;
    const clang::SourceRange range = step->range;
    StmtPtr st = assigns_tensor ? ir::assign(step->args[0]->var, std::move(step->args[1])) : ir::eval(std::move(step));
    st->range = range;
    out.push_back(std::move(st));
  }

  // A condition that computes tensors is evaluated as a break at the start of the body, where its
  // tensors are computed as in any statement: as often as C++ evaluates it, after the step.
  void leave_inside(ir::Stmt& s) {
    s.body.insert(s.body.begin(), exit_if(std::move(s.expr)));
    s.expr = nullptr;
  }

  // if (!(condition)) break;
  static StmtPtr exit_if(ir::ExprPtr condition) {
    auto exit = std::make_unique<ir::Stmt>();
    exit->kind = StmtKind::If;
    exit->range = condition->range;
    exit->expr = ir::unary("!", std::move(condition), ir::Type::Bool);
    auto jump = std::make_unique<ir::Stmt>();
    jump->kind = StmtKind::Break;
    jump->range = exit->range;
    exit->body.push_back(std::move(jump));
    return exit;
  }

  // The statements of a loop's body with its jumps made into flags and what follows one guarded.
  std::vector<StmtPtr> guard(std::vector<StmtPtr> stmts, const Flags& f) {
    std::vector<StmtPtr> out;
    for (size_t i = 0; i < stmts.size(); ++i) {
      StmtPtr s = std::move(stmts[i]);
      if (s->kind == StmtKind::Break) {
        out.push_back(set(f.broke, s->range));
        return out;
      }
      if (s->kind == StmtKind::Continue) {
        out.push_back(set(f.skipped, s->range));
        return out;
      }
      if (s->kind == StmtKind::Return) {
        const std::vector<int> r = results();
        for (size_t k = 0; k < r.size(); ++k) {
          StmtPtr a = ir::assign(r[k], ir::clone(r.size() == 1 ? *s->expr : s->expr->arg(k)));
          a->range = s->range;
          a->ast = s->ast;
          out.push_back(std::move(a));
        }
        out.push_back(set(f.returned, s->range));
        out.push_back(set(f.broke, s->range));
        return out;
      }
      Jumps j;
      if (s->kind == StmtKind::If || s->kind == StmtKind::Block) find_jumps(*s, j, false, false);
      if (!j.any()) {
        out.push_back(std::move(s));
        continue;
      }
      s->body = guard(std::move(s->body), f);
      s->else_body = guard(std::move(s->else_body), f);
      const clang::SourceRange range = s->range;
      out.push_back(std::move(s));
      std::vector<StmtPtr> rest;
      for (size_t k = i + 1; k < stmts.size(); ++k) rest.push_back(std::move(stmts[k]));
      rest = guard(std::move(rest), f);
      if (!rest.empty()) out.push_back(when_not({f.broke, f.skipped}, std::move(rest), range));
      return out;
    }
    return out;
  }

  int flag(const std::string& base, std::vector<StmtPtr>& out, clang::SourceRange range) {
    const int id = ir::add_var(fn_, names_.claim(base), ir::Type::Bool, "bool");
    StmtPtr d = ir::decl(id, ir::opaque("false", ir::Type::Bool));
    d->range = range;
    out.push_back(std::move(d));
    return id;
  }

  StmtPtr set(int flag, clang::SourceRange range) {
    StmtPtr a = ir::assign(flag, ir::opaque("true", ir::Type::Bool));
    a->range = range;
    return a;
  }

  ir::ExprPtr negated(int flag) { return ir::unary("!", ir::var_ref(fn_, flag), ir::Type::Bool); }

  // if (!flag && ...) { body }, over the flags that exist.
  StmtPtr when_not(const std::vector<int>& flags, std::vector<StmtPtr> body, clang::SourceRange range) {
    ir::ExprPtr cond;
    for (int f : flags)
      if (f >= 0) cond = cond ? ir::binary("&&", std::move(cond), negated(f), ir::Type::Bool) : negated(f);
    auto st = std::make_unique<ir::Stmt>();
    st->kind = StmtKind::If;
    st->range = range;
    st->expr = std::move(cond);
    st->body = std::move(body);
    return st;
  }

  // The variables a return inside a loop assigns, declared (without a value) first in the function.
  const std::vector<int>& results() {
    if (results_.empty())
      for (size_t k = 0; k < result_count_; ++k) {
        const int id = ir::add_var(fn_, names_.claim(result_count_ == 1 ? "loop_result__" : "loop_result" + std::to_string(k) + "__"),
                                   ir::Type::Tensor, "fg::Tensor");
        results_.push_back(id);
      }
    return results_;
  }

  ir::Function& fn_;
  size_t result_count_;
  std::vector<int> results_;
  FreshNames names_;
  bool changed_ = false;
};

// A case of a switch: its labels' values (none for default only) and the statements up to its
// break (`ends`: it ended in a break, return or continue, rather than falling through).
struct Section {
  std::vector<std::string> labels;
  bool is_default = false;
  std::vector<StmtPtr> own;
  bool ends = false;
};

// Whether C++ kept as text (a statement without tensors) holds a break of the switch around it.
bool text_breaks(const clang::Stmt* s) {
  if (s == nullptr) return false;
  if (llvm::isa<clang::BreakStmt>(s)) return true;
  if (llvm::isa<clang::ForStmt>(s) || llvm::isa<clang::WhileStmt>(s) || llvm::isa<clang::DoStmt>(s) ||
      llvm::isa<clang::CXXForRangeStmt>(s) || llvm::isa<clang::SwitchStmt>(s) || llvm::isa<clang::LambdaExpr>(s))
    return false;  // their breaks are theirs
  for (const clang::Stmt* c : s->children())
    if (text_breaks(c)) return true;
  return false;
}

// Whether a break of the switch sits inside an if or block of a case (one inside a loop or an
// inner switch is theirs).
bool breaks_switch(const std::vector<StmtPtr>& body) {
  for (const auto& s : body) {
    if (s->kind == StmtKind::Break) return true;
    if ((s->kind == StmtKind::If || s->kind == StmtKind::Block) && (breaks_switch(s->body) || breaks_switch(s->else_body)))
      return true;
  }
  return false;
}

bool is_jump(const ir::Stmt& s) {
  return s.kind == StmtKind::Break || s.kind == StmtKind::Return || s.kind == StmtKind::Continue;
}

// The statement `t` of a case, appended to `sec`: a break ends the case, as does a braced block
// that ends in one (`case 0: { ...; break; }`, the break dropped); one elsewhere inside an if or
// block is kept (SwitchRewriter::guarded turns it into a flag).
void append(Section& sec, const ir::Stmt& t) {
  if (t.kind == StmtKind::Break) {
    sec.ends = true;
    return;
  }
  StmtPtr copy = ir::clone(t);
  if (copy->kind == StmtKind::Block && !copy->body.empty() && is_jump(*copy->body.back())) {
    sec.ends = true;
    if (copy->body.back()->kind == StmtKind::Break) copy->body.pop_back();
  } else {
    sec.ends = t.kind == StmtKind::Return || t.kind == StmtKind::Continue;
  }
  sec.own.push_back(std::move(copy));
}

std::optional<std::vector<Section>> sections_of(const ir::Stmt& sw) {
  // A break in C++ kept as text (an `if` on scalars with an init statement, say) would leave the
  // loop around the switch once the switch is a chain of ifs: the switch is reported instead.
  std::function<bool(const ir::Stmt&)> hidden = [&](const ir::Stmt& s) {
    if (s.kind == StmtKind::Opaque) return s.ast != nullptr && !llvm::isa<clang::BreakStmt>(s.ast) && text_breaks(s.ast);
    if (s.kind != StmtKind::If && s.kind != StmtKind::Block) return false;  // loops and switches have their own
    for (const auto* part : {&s.body, &s.else_body})
      for (const auto& c : *part)
        if (hidden(*c)) return true;
    return false;
  };
  for (const ir::Stmt* t : ir::switch_items(sw.body))
    if (hidden(*t)) return std::nullopt;
  std::vector<Section> sections;
  bool labelled = false;  // the last item was a label: the next label joins its section
  for (const ir::Stmt* t : ir::switch_items(sw.body)) {
    if (t->kind == StmtKind::Case) {
      if (!labelled) sections.emplace_back();
      labelled = true;
      if (t->text == "default") sections.back().is_default = true;
      else sections.back().labels.push_back(t->text.substr(5));  // "case " + value
      continue;
    }
    labelled = false;
    if (sections.empty() || sections.back().ends) continue;  // unreachable: after a jump, before a label
    append(sections.back(), *t);
  }
  return sections;
}

class SwitchRewriter {
 public:
  explicit SwitchRewriter(ir::Function& fn) : fn_(fn), names_(fn) {}

  bool changed() const { return changed_; }

  std::vector<StmtPtr> rewrite(std::vector<StmtPtr> stmts) {  // inner switches first
    return bottom_up(std::move(stmts), [this](StmtPtr s, std::vector<StmtPtr>& out) {
      std::optional<std::vector<Section>> sections;
      if (s->kind == StmtKind::Switch) sections = sections_of(*s);
      if (!sections) {
        out.push_back(std::move(s));
        return;
      }
      changed_ = true;
      chain(*s, *sections, out);
    });
  }

 private:
  // The statements that run when section `i` is selected: its own, then the next section's while
  // it falls through; a break inside their ifs and blocks sets a flag that the rest tests.
  std::vector<StmtPtr> runs(const std::vector<Section>& sections, size_t i) {
    std::vector<StmtPtr> out;
    for (size_t k = i; k < sections.size(); ++k) {
      for (const StmtPtr& t : sections[k].own) out.push_back(ir::clone(*t));
      if (sections[k].ends) break;
    }
    if (!breaks_switch(out)) return out;
    const int flag = ir::add_var(fn_, names_.claim("left_switch__"), ir::Type::Bool, "bool");
    std::vector<StmtPtr> guarded_out;
    guarded_out.push_back(ir::decl(flag, ir::opaque("false", ir::Type::Bool)));
    for (StmtPtr& s : guarded(std::move(out), flag)) guarded_out.push_back(std::move(s));
    return guarded_out;
  }

  // `stmts` with each break of the switch inside their ifs and blocks setting `flag`, and what
  // follows such a statement run only while the flag is false (what follows a break directly is
  // never run).
  std::vector<StmtPtr> guarded(std::vector<StmtPtr> stmts, int flag) {
    std::vector<StmtPtr> out;
    for (size_t i = 0; i < stmts.size(); ++i) {
      StmtPtr& s = stmts[i];
      if (s->kind == StmtKind::Break) {
        out.push_back(ir::assign(flag, ir::opaque("true", ir::Type::Bool)));
        return out;
      }
      if ((s->kind != StmtKind::If && s->kind != StmtKind::Block) ||
          (!breaks_switch(s->body) && !breaks_switch(s->else_body))) {
        out.push_back(std::move(s));
        continue;
      }
      s->body = guarded(std::move(s->body), flag);
      s->else_body = guarded(std::move(s->else_body), flag);
      out.push_back(std::move(s));
      std::vector<StmtPtr> rest = guarded(
          std::vector<StmtPtr>(std::make_move_iterator(stmts.begin() + static_cast<long>(i) + 1),
                               std::make_move_iterator(stmts.end())),
          flag);
      if (!rest.empty()) {
        auto st = std::make_unique<ir::Stmt>();
        st->kind = StmtKind::If;
        st->expr = ir::binary("==", ir::var_ref(fn_, flag), ir::opaque("false", ir::Type::Bool), ir::Type::Bool);
        st->body = std::move(rest);
        out.push_back(std::move(st));
      }
      return out;
    }
    return out;
  }

  // The switch condition's type, spelled out where the generated code can name it (AD declares a
  // value that a branch sets before the branch, where `auto` cannot stand); else `auto`.
  std::string selector_type(const ir::Stmt& sw) const {
    const auto* node = llvm::dyn_cast_or_null<clang::SwitchStmt>(sw.ast);
    if (node == nullptr || fn_.decl == nullptr) return "auto";
    const clang::QualType t =
        node->getCond()->IgnoreImpCasts()->getType().getNonReferenceType().getUnqualifiedType().getCanonicalType();
    if (const clang::TagDecl* tag = t->getAsTagDecl()) {
      for (const clang::Decl* d = tag; d != nullptr && !llvm::isa<clang::TranslationUnitDecl>(d);
           d = llvm::dyn_cast<clang::Decl>(d->getDeclContext())) {
        if (llvm::isa<clang::LinkageSpecDecl>(d)) continue;  // extern "C++" { ... }
        const auto* named = llvm::dyn_cast<clang::NamedDecl>(d);
        if (named == nullptr || named->getName().empty() || d->getDeclContext()->isFunctionOrMethod() ||
            (d->getAccess() != clang::AS_public && d->getAccess() != clang::AS_none))
          return "auto";  // unnamed, local, in an anonymous namespace or not public
      }
    }
    clang::PrintingPolicy policy(fn_.decl->getASTContext().getLangOpts());
    policy.SuppressTagKeyword = true;
    policy.FullyQualifiedName = true;
    policy.SuppressScope = false;
    policy.SuppressUnwrittenScope = true;
    policy.PrintCanonicalTypes = true;
    return t.getAsString(policy);
  }

  void chain(const ir::Stmt& sw, const std::vector<Section>& sections, std::vector<StmtPtr>& out) {
    const int value = ir::add_var(fn_, names_.claim("selected__"), sw.expr->type, "const " + selector_type(sw));
    StmtPtr d = ir::decl(value, ir::clone(*sw.expr));
    d->range = sw.range;
    out.push_back(std::move(d));
    std::vector<StmtPtr> ifs;
    std::vector<ir::Stmt*> chained;
    std::vector<StmtPtr>* at = &ifs;
    std::optional<size_t> fallback;
    for (size_t i = 0; i < sections.size(); ++i) {
      if (sections[i].is_default) {
        fallback = i;
        continue;
      }
      ir::ExprPtr cond;
      for (const auto& label : sections[i].labels) {
        ir::ExprPtr eq = ir::binary("==", ir::var_ref(fn_, value), ir::opaque(label, sw.expr->type), ir::Type::Bool);
        cond = cond ? ir::binary("||", std::move(cond), std::move(eq), ir::Type::Bool) : std::move(eq);
      }
      auto st = std::make_unique<ir::Stmt>();
      st->kind = StmtKind::If;
      st->range = sw.range;
      st->ast = sw.ast;
      st->expr = std::move(cond);
      st->body = runs(sections, i);
      std::vector<StmtPtr>* next = &st->else_body;
      chained.push_back(st.get());
      at->push_back(std::move(st));
      at = next;
    }
    if (fallback) *at = runs(sections, *fallback);
    for (ir::Stmt* s : chained) s->has_else = !s->else_body.empty();  // the last has none without a default
    for (StmtPtr& s : ifs) out.push_back(std::move(s));
  }

  ir::Function& fn_;
  FreshNames names_;
  bool changed_ = false;
};

bool is_assignment(const std::string& op) {
  return !op.empty() && op.back() == '=' && op != "==" && op != "!=" && op != "<=" && op != ">=";
}

// The first part of `e` that `here` accepts and that may be computed before the rest of `e` runs,
// or null: not in a lambda, behind `&&`/`||`, in a `?:`'s sides, after what a `,` or a braced list
// runs first, or where it is written to (`(c ? a : b).add_(x)`, `(c ? a : b) += x`: a copy would
// take the write).
ir::ExprPtr* first_computed(ir::ExprPtr& e, const std::function<bool(const ir::Expr&)>& here) {
  if (e->kind == ir::ExprKind::Lambda) return nullptr;
  if (here(*e)) return &e;
  const bool first_only = e->kind == ir::ExprKind::Conditional || e->kind == ir::ExprKind::List ||
                          e->kind == ir::ExprKind::Tuple ||
                          (e->kind == ir::ExprKind::Binary && (e->text == "&&" || e->text == "||" || e->text == ","));
  const bool written = (e->kind == ir::ExprKind::Call && ops::info(*e).inplace_form()) ||
                       (e->kind == ir::ExprKind::Binary && is_assignment(e->text));
  for (size_t i = written ? 1 : 0; i < (first_only ? 1 : e->args.size()) && i < e->args.size(); ++i)
    if (ir::ExprPtr* c = first_computed(e->args[i], here)) return c;
  return nullptr;
}

bool is_choice(const ir::Expr& e) { return e.kind == ir::ExprKind::Conditional && e.type == ir::Type::Tensor; }

// The first `?:` of tensors in `e` that may be chosen before the rest of `e` runs.
ir::ExprPtr* choice_in(ir::ExprPtr& e) { return first_computed(e, is_choice); }

bool holds_choice(const ir::Expr& e) {
  if (e.kind == ir::ExprKind::Lambda) return false;
  if (is_choice(e)) return true;
  for (const auto& a : e.args)
    if (holds_choice(*a)) return true;
  return false;
}

// The first `a && b` or `a || b` whose right side holds a `?:` of tensors (choice_in does not look
// there: that side may not run).
ir::ExprPtr* guarded_choice_in(ir::ExprPtr& e) {
  return first_computed(e, [](const ir::Expr& x) {
    return x.kind == ir::ExprKind::Binary && (x.text == "&&" || x.text == "||") && holds_choice(*x.args[1]);
  });
}

class ChoiceRewriter {
 public:
  explicit ChoiceRewriter(ir::Function& fn) : fn_(fn), names_(fn) {}

  bool changed() const { return changed_; }

  std::vector<StmtPtr> rewrite(std::vector<StmtPtr> stmts) {
    return bottom_up(std::move(stmts), [this](StmtPtr s, std::vector<StmtPtr>& out) { statement(std::move(s), out); });
  }

 private:
  // `s` after the ifs that choose its `?:`s' values.
  void statement(StmtPtr s, std::vector<StmtPtr>& out) {
    const bool evaluated_once = !is_loop(*s) && s->kind != StmtKind::Opaque;
    const bool binds_reference =  // fg::Tensor& r = c ? a : b; writes through r reach a or b
        s->kind == StmtKind::Decl && fn_.var(s->var).cxx_type.find('&') != std::string::npos;
    ir::ExprPtr* c = evaluated_once && s->expr ? choice_in(s->expr) : nullptr;
    if (c != nullptr && binds_reference && c == &s->expr) c = nullptr;
    if (c == nullptr && evaluated_once && s->expr)
      if (ir::ExprPtr* g = guarded_choice_in(s->expr)) {
        short_circuit(*g, out);
        statement(std::move(s), out);  // its next `?:`
        return;
      }
    if (c == nullptr) {
      out.push_back(std::move(s));
      return;
    }
    changed_ = true;
    if (s->kind == StmtKind::Decl && c == &s->expr && fn_.var(s->var).type == ir::Type::Tensor) {
      ir::ExprPtr choice = std::move(s->expr);  // fg::Tensor y; if (c) y = a; else y = b;
      const int var = s->var;
      out.push_back(std::move(s));
      choose(var, std::move(choice), out);
      return;
    }
    const int var = ir::add_var(fn_, names_.claim("chosen__"), ir::Type::Tensor, "fg::Tensor");
    StmtPtr d = ir::decl(var, nullptr);
    d->range = (*c)->range;
    out.push_back(std::move(d));
    ir::ExprPtr choice = std::move(*c);
    *c = ir::var_ref(fn_, var);
    choose(var, std::move(choice), out);
    statement(std::move(s), out);  // its next `?:`
  }

  // `a && b` -> `bool both__ = a; if (both__) both__ = b;` (`||`: if (!either__)), so that a `?:`
  // in b is chosen only where C++ evaluates b.
  void short_circuit(ir::ExprPtr& e, std::vector<StmtPtr>& out) {
    changed_ = true;
    const bool conjunction = e->text == "&&";
    const int var = ir::add_var(fn_, names_.claim(conjunction ? "both__" : "either__"), ir::Type::Bool, "bool");
    StmtPtr d = ir::decl(var, std::move(e->args[0]));
    d->range = e->range;
    out.push_back(std::move(d));
    auto st = std::make_unique<ir::Stmt>();
    st->kind = StmtKind::If;
    st->range = e->range;
    st->expr = conjunction ? ir::var_ref(fn_, var) : ir::unary("!", ir::var_ref(fn_, var), ir::Type::Bool);
    StmtPtr a = ir::assign(var, std::move(e->args[1]));
    a->range = e->range;
    statement(std::move(a), st->body);
    out.push_back(std::move(st));
    e = ir::var_ref(fn_, var);
  }

  // if (c) var = a; else var = b; (the sides' own `?:`s chosen inside)
  void choose(int var, ir::ExprPtr choice, std::vector<StmtPtr>& out) {
    auto st = std::make_unique<ir::Stmt>();
    st->kind = StmtKind::If;
    st->range = choice->range;
    st->expr = std::move(choice->args[0]);
    st->has_else = true;
    for (size_t side = 1; side <= 2; ++side) {
      StmtPtr a = ir::assign(var, std::move(choice->args[side]));
      a->range = choice->range;
      statement(std::move(a), side == 1 ? st->body : st->else_body);
    }
    statement(std::move(st), out);  // a `?:` in its condition
  }

  ir::Function& fn_;
  FreshNames names_;
  bool changed_ = false;
};

}  // namespace

std::unique_ptr<ir::Function> choices_as_ifs(const ir::Function& fn) {
  bool any = false;
  ir::for_each_expr(fn.body, [&](const ir::Expr& e) { any |= e.kind == ir::ExprKind::Conditional && e.type == ir::Type::Tensor; });
  if (!any) return nullptr;
  std::unique_ptr<ir::Function> out = ir::copy_function(fn);
  ChoiceRewriter rw(*out);
  out->body = rw.rewrite(std::move(out->body));
  if (!rw.changed()) return nullptr;
  return out;
}

std::unique_ptr<ir::Function> switch_chains(const ir::Function& fn) {
  bool any = false;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) { any |= s.kind == StmtKind::Switch; });
  if (!any) return nullptr;
  std::unique_ptr<ir::Function> out = ir::copy_function(fn);
  SwitchRewriter rw(*out);
  out->body = rw.rewrite(std::move(out->body));
  if (!rw.changed()) return nullptr;
  return out;
}

bool computes_tensors(const ir::Stmt& s, const ir::Function& fn) {
  bool found = false;
  const auto stmt = [&](const ir::Stmt& t) {
    if ((t.kind == StmtKind::Decl || t.kind == StmtKind::Assign) && t.var >= 0 && ir::is_tensor_like(fn.var(t.var).type))
      found = true;
    for (int v : t.vars) found |= ir::is_tensor_like(fn.var(v).type);
    found |= t.kind == StmtKind::Eval && t.expr && ir::is_tape_op(*t.expr);  // a push_back changes a list
    const auto expr = [&](const ir::Expr& e) { found |= ir::is_tensor_like(e.type); };
    if (t.expr) ir::for_each_expr(*t.expr, expr);
    if (t.step) ir::for_each_expr(*t.step, expr);
  };
  stmt(s);
  for (const auto* children : {&s.init, &s.body, &s.else_body}) ir::for_each_stmt(*children, stmt);
  return found;
}

std::unique_ptr<ir::Function> structured_loops(const ir::Function& fn) {
  bool any = false;
  ir::for_each_stmt(fn.body, [&](const ir::Stmt& s) {
    any |= is_loop(s) && (jumps_of(s.body).any() || trip_computes_tensors(s.expr) || trip_computes_tensors(s.step));
  });
  if (!any) return nullptr;
  std::unique_ptr<ir::Function> out = ir::copy_function(fn);
  LoopRewriter rw(*out, returned_tensors(fn));
  std::vector<StmtPtr> body = rw.rewrite(std::move(out->body));
  if (!rw.changed()) return nullptr;
  out->body.clear();
  for (int r : rw.declared_results()) out->body.push_back(ir::decl(r, nullptr));
  for (StmtPtr& s : body) out->body.push_back(std::move(s));
  return out;
}

const ir::Function& structured_control_flow(const ir::Function& fn, std::vector<std::unique_ptr<ir::Function>>& owned) {
  const ir::Function* at = &fn;
  for (auto pass : {switch_chains, structured_loops, choices_as_ifs, single_return})
    if (std::unique_ptr<ir::Function> next = pass(*at)) {
      at = next.get();
      owned.push_back(std::move(next));
    }
  return *at;
}

std::unique_ptr<ir::Function> single_return(const ir::Function& fn) {
  if (fn.body.empty()) return nullptr;
  bool early = false;  // a return that is not the function's last statement
  for (const auto& s : fn.body)
    if (s.get() != fn.body.back().get() || s->kind != StmtKind::Return) early |= s->kind == StmtKind::Return || has_return(s->body) || has_return(s->else_body);
  if (!early || !movable(fn, fn.body)) return nullptr;
  const size_t n = returned_tensors(fn);
  if (n == 0) return nullptr;
  std::unique_ptr<ir::Function> out = ir::copy_function(fn);
  std::vector<int> results;
  for (size_t k = 0; k < n; ++k)
    results.push_back(ir::add_var(*out, n == 1 ? "result__" : "result" + std::to_string(k) + "__", ir::Type::Tensor,
                                  "fg::Tensor"));
  std::vector<StmtPtr> body;
  for (int r : results) body.push_back(ir::decl(r, nullptr));
  Rewriter rw(results);
  for (StmtPtr& s : rw.rewrite(std::move(out->body))) body.push_back(std::move(s));
  std::vector<ir::ExprPtr> values;
  for (int r : results) values.push_back(ir::var_ref(*out, r));
  body.push_back(ir::ret(n == 1 ? std::move(values[0]) : ir::tuple(std::move(values))));
  out->body = std::move(body);
  return out;
}

}  // namespace funcgen::ad
