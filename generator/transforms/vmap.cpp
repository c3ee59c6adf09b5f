#include "transforms/vmap.h"

#include <clang/AST/Expr.h>
#include <clang/AST/ExprCXX.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "emitter/cxx_text.h"
#include "ops/batching_rules.h"

namespace funcgen {

namespace {

using cxx::is_identifier;
using cxx::join;
using cxx::join_args;
using cxx::paren;
using cxx::unparen;
using ir::Expr;
using ir::ExprKind;
using ir::Stmt;
using ir::StmtKind;

std::string mask(Levels l) {
  if (l == 0) return "0";
  std::string bits;
  for (Levels v = l; v != 0; v >>= 1) bits.insert(bits.begin(), (v & 1) ? '1' : '0');
  return "0b" + bits;
}

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

// A logical dim as a physical one, computed here when it is a literal.
std::string shift_dim(const std::string& dim, int nb) {
  if (nb == 0) return dim;
  if (auto v = int_literal(dim)) return *v >= 0 ? std::to_string(*v + nb) : std::to_string(*v);
  return "fg::vmap::dim(" + dim + ", " + std::to_string(nb) + ")";
}

std::string shift_dims(const std::string& dims, int nb) {
  if (nb == 0) return dims;
  // {0, -1} written out: shift each.
  if (dims.size() >= 2 && dims.front() == '{' && dims.back() == '}') {
    std::stringstream in(dims.substr(1, dims.size() - 2));
    std::string item, out;
    bool all_literal = true;
    std::vector<std::string> items;
    while (std::getline(in, item, ',')) {
      if (!int_literal(item)) all_literal = false;
      items.push_back(item);
    }
    if (all_literal) {
      for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + shift_dim(items[i], nb);
      return "{" + out + "}";
    }
  }
  if (int_literal(dims)) return shift_dim(dims, nb);
  return "fg::vmap::dims(" + dims + ", " + std::to_string(nb) + ")";
}

struct Code {
  std::string text;
  Levels levels = 0;
};

// Shared by every function emitted for one spec: names of batched helpers already emitted.
struct EmitContext {
  std::string spec_name;
  int nlevels = 0;
  Reporter* reporter = nullptr;
  std::string* helpers = nullptr;
  std::map<std::pair<const clang::FunctionDecl*, std::vector<Levels>>, std::string> specializations;
  std::map<std::pair<const ir::Function*, std::vector<Levels>>, std::string> vmapped;
  std::set<std::string> helper_names;
};

// Whether `word` occurs in `text` as a whole identifier.
bool uses_name(const std::string& text, const std::string& word) {
  const auto is_name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_name_char(text[at - 1]);
    const bool ends = at + word.size() == text.size() || !is_name_char(text[at + word.size()]);
    if (starts && ends) return true;
  }
  return false;
}

// The batch size of vmap level k. Every name the generated code introduces ends in "__": C++
// reserves names with a double underscore, so no name of the user's (a local, a global the body
// reads, a keyword) can be one.
std::string batch_name(int k) { return "batch" + std::to_string(k) + "__"; }

// The batch size parameters of a batched body; those `body` does not use are left unnamed.
std::string batch_params(int nlevels, const std::string* body = nullptr) {
  std::vector<std::string> p;
  for (int k = 0; k < nlevels; ++k) {
    const std::string name = batch_name(k);
    p.push_back(body == nullptr || uses_name(*body, name) ? "int64_t " + name : "int64_t /*" + name + "*/");
  }
  return join(p);
}

std::string batch_args(int nlevels) {
  std::vector<std::string> p;
  for (int k = 0; k < nlevels; ++k) p.push_back(batch_name(k));
  return join(p);
}

std::string batch_sizes_of(Levels l) {
  std::vector<std::string> p;
  for (int k = 0; k < 32; ++k)
    if (l & (1u << k)) p.push_back(batch_name(k));
  return "{" + join(p) + "}";
}

std::string signature(const ir::Function& fn, const std::string& name, bool with_batches, int nlevels,
                      const std::string* body = nullptr) {
  std::vector<std::string> params;
  for (int id : fn.params) {
    const ir::Var& v = fn.var(id);
    std::string type = v.cxx_type;
    params.push_back(type + (type.back() == '&' ? "" : " ") + v.name);
  }
  if (with_batches && nlevels > 0) params.push_back(batch_params(nlevels, body));
  return fn.return_cxx_type + " " + name + "(" + join(params) + ")";
}

class BodyEmitter {
 public:
  // `params`: the levels each parameter arrives batched at. A helper (a user function called from
  // the transformed one) returns every tensor at the levels of all its outputs, as its callers'
  // analysis takes the levels of a call to be.
  BodyEmitter(const BatchingAnalysis& analysis, EmitContext& ctx, std::vector<Levels> params, bool helper)
      : an_(analysis), fn_(analysis.function()), ctx_(ctx), params_(std::move(params)), helper_(helper) {
    for (const auto& v : fn_.vars) names_.insert(v.name);
  }

  std::string body() {
    std::string out;
    // A parameter that the function gives batched values holds its argument expanded from the start.
    for (size_t i = 0; i < fn_.params.size() && i < params_.size(); ++i) {
      const ir::Var& v = fn_.var(fn_.params[i]);
      const Levels want = an_.var(v.id);
      if (v.type != ir::Type::Tensor || want == params_[i] || v.cxx_type.find("const") != std::string::npos ||
          v.cxx_type.back() == '&')
        continue;
      line(out, 1, v.name + " = " + coerce_levels(v.name, params_[i], want) + ";  // assigned batched values below");
    }
    block(fn_.body, out, 1);
    return out;
  }

 private:
  // ------------------------------------------------------------------ names and preludes

  // A new name, ending in "__" as every generated name does (see batch_name); `base` may be one.
  std::string fresh(std::string base) {
    for (size_t at = base.find("__"); at != std::string::npos; at = base.find("__")) base.erase(at, 2);
    std::string name = base + "__";
    for (int i = 1; names_.count(name) != 0; ++i) name = base + std::to_string(i) + "__";
    names_.insert(name);
    return name;
  }

  // A name for the value of `c`, so that it can be used twice: itself when it is one already.
  std::string bind(const Code& c, const std::string& base = "t") {
    if (is_identifier(c.text)) return c.text;
    const std::string name = fresh(base);
    pre_.push_back("const fg::Tensor " + name + " = " + unparen(c.text) + ";");
    return name;
  }

  // Emits `fn` with its own prelude; when it needs statements, wraps them in a lambda so that they
  // run exactly where and when the expression is evaluated.
  template <typename F>
  std::string scoped(F fn) {
    std::vector<std::string> saved;
    saved.swap(pre_);
    const auto saved_aligned = aligned_;
    std::string text = fn();
    aligned_ = saved_aligned;
    std::vector<std::string> mine;
    mine.swap(pre_);
    pre_.swap(saved);
    if (mine.empty()) return text;
    return "[&] { " + join(mine, " ") + " return " + text + "; }()";
  }

  void flush(std::string& out, int indent) {
    for (const auto& p : pre_) out += std::string(indent * 2, ' ') + p + "\n";
    pre_.clear();
    aligned_.clear();
  }

  // ------------------------------------------------------------------ statements

  void block(const std::vector<ir::StmtPtr>& body, std::string& out, int indent, size_t start = 0) {
    for (size_t i = start; i < body.size(); ++i) {
      const Stmt& s = *body[i];
      if (an_.vmap().select && s.expr && an_.of(*s.expr) != 0) {
        if (s.kind == StmtKind::If && !s.has_else && !s.body.empty() && s.body.back()->kind == StmtKind::Return) {
          select_return(s, body, i + 1, out, indent);
          return;  // the rest of the block was the else branch
        }
        if (s.kind == StmtKind::If) {
          select_if(s, out, indent);
          continue;
        }
        if (s.kind == StmtKind::While) {
          select_while(s, out, indent);
          continue;
        }
      }
      stmt(s, out, indent);
    }
  }

  // The value of `e` for variable `v`: a braced list stored into a std::vector of tensors has every
  // element at the vector's levels, as v[i] reads them.
  std::string stored(const Expr& e, const ir::Var& v) {
    if (v.type != ir::Type::TensorList || e.kind != ExprKind::List) return coerce(expr(e), v);
    std::vector<std::string> items;
    for (const auto& a : e.args) {
      const Code c = expr(*a);
      items.push_back(a->type == ir::Type::Tensor ? coerce_levels(c.text, c.levels, an_.var(v.id)) : c.text);
    }
    return "{" + join_args(items) + "}";
  }

  // A value as the variable it is stored in holds it: batched at the variable's levels (a variable
  // assigned batched and unbatched values holds the unbatched ones expanded).
  std::string coerce(const Code& c, const ir::Var& v) {
    const Levels want = an_.var(v.id);
    if (v.type != ir::Type::Tensor || c.levels == want) return c.text;
    return "fg::vmap::materialize(" + unparen(c.text) + ", " + mask(c.levels) + ", " + mask(want) + ", " + batch_sizes_of(want) + ")";
  }

  // ------------------------------------------------------------------ control_flow='select'

  // The condition of a branch on batched values as a batched bool tensor: `t.item<bool>()` is t,
  // a comparison of an item with a number is the tensor comparison, `!c` is c == 0.
  std::optional<Code> predicate(const Expr& e) {
    if (e.kind == ExprKind::Call && (e.op == "item" || e.op == "is_nonzero") && !e.args.empty() &&
        e.args[0]->type == ir::Type::Tensor) {
      Code t = expr(e.arg(0));
      if (e.op == "is_nonzero") t.text = "(" + t.text + " != 0)";
      return t;
    }
    if (e.kind == ExprKind::Cast) return predicate(e.arg(0));
    if (e.kind == ExprKind::Unary && e.text == "!") {
      auto inner = predicate(e.arg(0));
      if (!inner) return std::nullopt;
      return Code{"(" + inner->text + " == 0)", inner->levels};
    }
    static const std::map<std::string, std::string> compare = {{"<", "lt"}, {">", "gt"}, {"<=", "le"},
                                                                {">=", "ge"}, {"==", "eq"}, {"!=", "ne"}};
    if (e.kind == ExprKind::Binary && compare.count(e.text) != 0) {
      const bool left = an_.of(e.arg(0)) != 0;
      const Expr& batched_side = left ? e.arg(0) : e.arg(1);
      const Expr& other = left ? e.arg(1) : e.arg(0);
      if (an_.of(other) != 0) return std::nullopt;
      auto t = predicate(batched_side);
      if (!t) return std::nullopt;
      const std::string o = expr(other).text;
      return Code{left ? "(" + t->text + " " + e.text + " " + o + ")" : "(" + o + " " + e.text + " " + t->text + ")", t->levels};
    }
    return std::nullopt;
  }

  Code predicate_or_report(const Expr& cond) {
    auto p = predicate(cond);
    if (!p) {
      ctx_.reporter->report("unsupported", cond.range.getBegin(),
                            "control_flow='select' cannot turn this condition into a per-example mask; write it as "
                            "a comparison of tensor values, e.g. (x > 0).item<bool>()")
          << cond.range;
      return {"false", 0};
    }
    return {bind(*p, "pred"), p->levels};
  }

  // Variables declared outside `body` that it assigns.
  void assigned_outer(const std::vector<ir::StmtPtr>& body, std::vector<int>& out) {
    std::set<int> declared;
    ir::for_each_stmt(body, [&](const Stmt& s) {
      if (s.kind == StmtKind::Decl) declared.insert(s.var);
    });
    ir::for_each_stmt(body, [&](const Stmt& s) {
      if (s.kind == StmtKind::Assign && declared.count(s.var) == 0 &&
          std::find(out.begin(), out.end(), s.var) == out.end())
        out.push_back(s.var);
    });
  }

  bool side_effect_free(const std::vector<ir::StmtPtr>& body, const std::vector<int>& vars) {
    for (const auto& st : body)
      if (!side_effect_free_stmt(*st)) return false;
    for (int v : vars)
      if (fn_.var(v).type != ir::Type::Tensor) {
        ctx_.reporter->report("unsupported", fn_.var(v).decl->getLocation(),
                              "control_flow='select' can select tensors per example, not the C++ value '" +
                                  fn_.var(v).name + "' that a branch on batched values assigns");
        return false;
      }
    return true;
  }

  // Runs `body` in a lambda on copies of the variables and returns their new values.
  std::string branch_lambda(const std::vector<ir::StmtPtr>& body, const std::vector<int>& vars, int indent) {
    std::string inner;
    block(body, inner, indent + 1);
    std::vector<std::string> names;
    for (int v : vars) names.push_back(fn_.var(v).name);
    return "[=]() mutable {\n" + inner + std::string((indent + 1) * 2, ' ') + "return std::make_tuple(" + join(names) +
           ");\n" + std::string(indent * 2, ' ') + "}()";
  }

  // The merge after both branches: each variable takes the branch's value its example chose.
  void merge(const Code& pred, const std::vector<int>& vars, const std::string& then_t, const std::string& else_t,
             std::string& out, int indent) {
    for (size_t k = 0; k < vars.size(); ++k) {
      const ir::Var& v = fn_.var(vars[k]);
      const std::string a = then_t + "_" + std::to_string(k), b = else_t + "_" + std::to_string(k);
      line(out, indent, "const fg::Tensor " + a + " = std::get<" + std::to_string(k) + ">(" + then_t + ");");
      line(out, indent, "const fg::Tensor " + b + " = std::get<" + std::to_string(k) + ">(" + else_t + ");");
      const std::string pb = fresh("pred_b"), ab = fresh(a + "_b"), bb = fresh(b + "_b");
      const Levels lv = an_.var(v.id);
      line(out, indent, "auto [" + pb + ", " + ab + ", " + bb + "] = fg::vmap::align({" + batched(pred.text, pred.levels) +
                            ", " + batched(a, lv) + ", " + batched(b, lv) + "});");
      line(out, indent, v.name + " = fg::where(" + pb + ", " + ab + ", " + bb + ");");
    }
  }

  void select_if(const Stmt& s, std::string& out, int indent) {
    std::vector<int> vars;
    assigned_outer(s.body, vars);
    assigned_outer(s.else_body, vars);
    if (!side_effect_free(s.body, vars) || !side_effect_free(s.else_body, vars)) return;
    line(out, indent, "// control_flow='select': both branches run, fg::where picks each example's");
    const Code pred = predicate_or_report(*s.expr);
    flush(out, indent);
    const std::string then_t = fresh("then_values"), else_t = fresh("else_values");
    line(out, indent, "const auto " + then_t + " = " + branch_lambda(s.body, vars, indent) + ";");
    line(out, indent, "const auto " + else_t + " = " + branch_lambda(s.else_body, vars, indent) + ";");
    merge(pred, vars, then_t, else_t, out, indent);
  }

  void select_while(const Stmt& s, std::string& out, int indent) {
    std::vector<int> vars;
    assigned_outer(s.body, vars);
    if (!side_effect_free(s.body, vars)) return;
    line(out, indent, "// control_flow='select': the loop runs while any example is active; finished ones keep their values");
    line(out, indent, "while (true) {");
    const Code pred = predicate_or_report(*s.expr);
    flush(out, indent + 1);
    line(out, indent + 1, "if (!fg::vmap::any(" + pred.text + ")) break;");
    const std::string step_t = fresh("step_values"), keep_t = fresh("kept_values");
    std::vector<std::string> names;
    for (int v : vars) names.push_back(fn_.var(v).name);
    line(out, indent + 1, "const auto " + step_t + " = " + branch_lambda(s.body, vars, indent + 1) + ";");
    line(out, indent + 1, "const auto " + keep_t + " = std::make_tuple(" + join(names) + ");");
    merge(pred, vars, step_t, keep_t, out, indent + 1);
    line(out, indent, "}");
  }

  // `if (c) { ...; return a; } rest...`: both sides run to their return, fg::where picks.
  void select_return(const Stmt& s, const std::vector<ir::StmtPtr>& body, size_t rest, std::string& out, int indent) {
    if (!side_effect_free(s.body, {})) return;
    for (size_t i = rest; i < body.size(); ++i) {
      std::vector<int> vars;
      if (!side_effect_free_stmt(*body[i])) return;
    }
    if (fn_.return_type != ir::Type::Tensor) {
      ctx_.reporter->report("unsupported", s.range.getBegin(),
                            "control_flow='select' with an early return supports functions that return one tensor");
      return;
    }
    line(out, indent, "// control_flow='select': both sides run to their return, fg::where picks each example's");
    const Code pred = predicate_or_report(*s.expr);
    flush(out, indent);
    const Levels target = an_.outputs()[0];
    const Levels saved = return_target_;
    return_target_ = target;
    std::string then_body, else_body;
    block(s.body, then_body, indent + 1);
    block(body, else_body, indent + 1, rest);
    return_target_ = saved;
    const std::string a = fresh("then_value"), b = fresh("else_value");
    line(out, indent, "const fg::Tensor " + a + " = [=]() mutable -> fg::Tensor {\n" + then_body + std::string(indent * 2, ' ') + "}();");
    line(out, indent, "const fg::Tensor " + b + " = [=]() mutable -> fg::Tensor {\n" + else_body + std::string(indent * 2, ' ') + "}();");
    const std::string pb = fresh("pred_b"), ab = fresh(a + "_b"), bb = fresh(b + "_b");
    line(out, indent, "auto [" + pb + ", " + ab + ", " + bb + "] = fg::vmap::align({" + batched(pred.text, pred.levels) + ", " +
                          batched(a, target) + ", " + batched(b, target) + "});");
    line(out, indent, "return " + coerce_levels("fg::where(" + pb + ", " + ab + ", " + bb + ")", target | pred.levels, target) + ";");
  }

  bool side_effect_free_stmt(const Stmt& s) {
    std::vector<ir::StmtPtr> none;
    bool ok = true;
    const auto check = [&](const Expr& e) {
      if (!ok || e.kind != ExprKind::Call) return;
      if ((e.op.size() > 1 && e.op.back() == '_') || e.form == ir::CallForm::External) {
        ok = false;
        ctx_.reporter->report("unsupported", e.range.getBegin(),
                              "control_flow='select' runs both branches, so they must be free of side effects; '" +
                                  e.op + "' is not")
            << e.range;
      }
    };
    if (s.expr) ir::for_each_expr(*s.expr, check);
    ir::for_each_expr(s.body, check);
    ir::for_each_expr(s.else_body, check);
    return ok;
  }

  std::string coerce_levels(const std::string& text, Levels have, Levels want) {
    if (have == want) return text;
    return "fg::vmap::materialize(" + unparen(text) + ", " + mask(have) + ", " + mask(want) + ", " + batch_sizes_of(want) + ")";
  }

  Levels return_target_ = 0;

  // A returned value at the levels of the function's outputs (the analysis joins every return):
  // a return of a value that the mapped inputs do not reach, beside one that they do, returns it
  // expanded, so that every return has the same layout.
  std::string returned(const Expr& e) {
    if (return_target_ != 0) {
      const Code c = expr(e);
      return coerce_levels(c.text, c.levels, return_target_);
    }
    std::vector<Levels> outs = an_.outputs();
    if (helper_) {
      Levels all = 0;
      for (Levels o : outs) all |= o;
      std::fill(outs.begin(), outs.end(), all);
    }
    if (e.kind == ExprKind::Tuple && e.args.size() == outs.size()) {
      std::vector<std::string> items;
      for (size_t i = 0; i < e.args.size(); ++i) {
        const Code c = expr(e.arg(i));
        items.push_back(e.arg(i).type == ir::Type::Tensor ? coerce_levels(c.text, c.levels, outs[i]) : c.text);
      }
      return "std::make_tuple(" + join_args(items) + ")";
    }
    const Code c = expr(e);
    if (fn_.return_type == ir::Type::Tensor && outs.size() == 1) return coerce_levels(c.text, c.levels, outs[0]);
    return c.text;
  }

  void line(std::string& out, int indent, const std::string& text) {
    flush(out, indent);
    out += std::string(indent * 2, ' ') + text + "\n";
  }

  std::string var_decl(const ir::Var& v) {
    const std::string& t = v.cxx_type;
    return t + (t.back() == '&' ? "" : " ") + v.name;
  }

  void stmt(const Stmt& s, std::string& out, int indent) {
    switch (s.kind) {
      case StmtKind::Decl: {
        const ir::Var& v = fn_.var(s.var);
        std::string text = (s.is_static_local ? "static " : "") + var_decl(v);
        if (s.expr) text += " = " + unparen(stored(*s.expr, v));
        line(out, indent, text + ";");
        return;
      }
      case StmtKind::Bind: {
        std::vector<std::string> names;
        for (int v : s.vars) names.push_back(fn_.var(v).name);
        line(out, indent, s.text + " [" + join(names) + "] = " + expr(*s.expr).text + ";");
        return;
      }
      case StmtKind::Assign:
        line(out, indent, fn_.var(s.var).name + " " + s.text + " " + unparen(stored(*s.expr, fn_.var(s.var))) + ";");
        return;
      case StmtKind::Eval:
        line(out, indent, expr(*s.expr).text + ";");
        return;
      case StmtKind::If: {
        line(out, indent, "if (" + unparen(expr(*s.expr).text) + ") {");
        block(s.body, out, indent + 1);
        if (s.has_else) {
          line(out, indent, "} else {");
          block(s.else_body, out, indent + 1);
        }
        line(out, indent, "}");
        return;
      }
      case StmtKind::For: {
        std::string init;
        if (!s.init.empty()) {
          std::string tmp;
          for (const auto& i : s.init) stmt(*i, tmp, 0);
          init = tmp;
          while (!init.empty() && (init.back() == '\n' || init.back() == ' ')) init.pop_back();
          if (init.find('\n') != std::string::npos) {
            // The init needed statements of its own: put the loop in a block of its own.
            line(out, indent, "{");
            out += init + "\n";
            init = ";";
            std::string cond = s.expr ? unparen(scoped([&] { return expr(*s.expr).text; })) : "";
            std::string step = s.step ? unparen(scoped([&] { return expr(*s.step).text; })) : "";
            line(out, indent, "for (; " + cond + "; " + step + ") {");
            block(s.body, out, indent + 1);
            line(out, indent, "}");
            line(out, indent, "}");
            return;
          }
        } else {
          init = ";";
        }
        std::string cond = s.expr ? unparen(scoped([&] { return expr(*s.expr).text; })) : "";
        std::string step = s.step ? unparen(scoped([&] { return expr(*s.step).text; })) : "";
        line(out, indent, "for (" + init + " " + cond + "; " + step + ") {");
        block(s.body, out, indent + 1);
        line(out, indent, "}");
        return;
      }
      case StmtKind::While:
        line(out, indent, "while (" + unparen(scoped([&] { return expr(*s.expr).text; })) + ") {");
        block(s.body, out, indent + 1);
        line(out, indent, "}");
        return;
      case StmtKind::DoWhile:
        line(out, indent, "do {");
        block(s.body, out, indent + 1);
        line(out, indent, "} while (" + unparen(scoped([&] { return expr(*s.expr).text; })) + ");");
        return;
      case StmtKind::Switch: {
        line(out, indent, "switch (" + unparen(expr(*s.expr).text) + ") {");
        // Each case runs in a block of its own: the names that the generated code declares
        // (alignments, temporaries) must not be in scope at a later case label.
        const std::vector<const Stmt*> flat = ir::switch_items(s.body);
        bool open = false;
        std::vector<std::string> labels;
        for (const Stmt* t : flat) {
          if (t->kind == StmtKind::Case) {
            if (open) line(out, indent + 1, "}");
            open = false;
            labels.push_back(t->text + ":");
            continue;
          }
          if (!open && !labels.empty()) {
            labels.back() += " {";
            for (const auto& label : labels) line(out, indent + 1, label);
            labels.clear();
            open = true;
          }
          stmt(*t, out, open ? indent + 2 : indent + 1);
        }
        for (const auto& label : labels) line(out, indent + 1, label + (&label == &labels.back() ? " {}" : ""));
        if (open) line(out, indent + 1, "}");
        line(out, indent, "}");
        return;
      }
      case StmtKind::Case:
        line(out, indent - 1, s.text + ":");
        return;
      case StmtKind::Break:
        line(out, indent, "break;");
        return;
      case StmtKind::Continue:
        line(out, indent, "continue;");
        return;
      case StmtKind::Return: {
        if (!s.expr) {
          line(out, indent, "return;");
          return;
        }
        line(out, indent, "return " + unparen(returned(*s.expr)) + ";");
        return;
      }
      case StmtKind::Block:
        if (s.text == "label") {
          block(s.body, out, indent);
          return;
        }
        line(out, indent, "{");
        block(s.body, out, indent + 1);
        line(out, indent, "}");
        return;
      case StmtKind::Opaque: {
        std::string text = s.text;
        if (s.ast != nullptr && llvm::isa<clang::Expr>(s.ast)) text += ";";
        line(out, indent, text);
        return;
      }
    }
  }

  // ------------------------------------------------------------------ expressions

  Code expr(const Expr& e) {
    const Levels l = an_.of(e);
    switch (e.kind) {
      case ExprKind::VarRef:
        return {fn_.var(e.var).name, l};
      case ExprKind::Opaque:
        return {e.text, l};
      case ExprKind::Unary: {
        const std::string a = expr(e.arg(0)).text;
        const auto* u = llvm::dyn_cast_or_null<clang::UnaryOperator>(e.ast);
        if (u != nullptr && u->isPostfix()) return {paren(a) + e.text, l};
        return {"(" + e.text + paren(a) + ")", l};
      }
      case ExprKind::Binary: {
        const std::string a = expr(e.arg(0)).text;
        // && and || evaluate their right side only sometimes: keep its statements inside it.
        const bool lazy = e.text == "&&" || e.text == "||";
        const std::string b = lazy ? scoped([&] { return expr(e.arg(1)).text; }) : expr(e.arg(1)).text;
        return {"(" + a + " " + e.text + " " + b + ")", l};
      }
      case ExprKind::Conditional: {
        if (an_.vmap().select && e.type == ir::Type::Tensor && an_.of(e.arg(0)) != 0) {
          // control_flow='select': both arms, picked per example.
          const Code pred = predicate_or_report(e.arg(0));
          const Code a = expr(e.arg(1)), b = expr(e.arg(2));
          const std::string an = bind(a), bn = bind(b);
          const std::string pb = fresh("pred_b"), ab = fresh(an + "_b"), bb = fresh(bn + "_b");
          pre_.push_back("auto [" + pb + ", " + ab + ", " + bb + "] = fg::vmap::align({" + batched(pred.text, pred.levels) +
                         ", " + batched(an, a.levels) + ", " + batched(bn, b.levels) + "});");
          return {"fg::where(" + pb + ", " + ab + ", " + bb + ")", pred.levels | a.levels | b.levels};
        }
        // Both arms give the value at the levels of the whole (one may be batched, the other not).
        const auto arm = [&](const Expr& x) {
          const Code c = expr(x);
          return x.type == ir::Type::Tensor ? coerce_levels(c.text, c.levels, l) : c.text;
        };
        const std::string c = expr(e.arg(0)).text;
        const std::string a = scoped([&] { return arm(e.arg(1)); });
        const std::string b = scoped([&] { return arm(e.arg(2)); });
        return {"(" + c + " ? " + a + " : " + b + ")", l};
      }
      case ExprKind::Cast:
        return {"static_cast<" + e.text + ">(" + expr(e.arg(0)).text + ")", l};
      case ExprKind::List: {
        std::vector<std::string> items;
        for (const auto& a : e.args) items.push_back(expr(*a).text);
        return {"{" + join(items) + "}", l};
      }
      case ExprKind::Tuple: {
        // A tuple is batched as a whole (std::get and structured bindings take its levels): every
        // tensor in it is expanded to them. std::tie binds variables and is left as it is.
        const auto* call = llvm::dyn_cast_or_null<clang::CallExpr>(e.ast);
        const bool tie = call != nullptr && call->getDirectCallee() != nullptr &&
                         call->getDirectCallee()->getQualifiedNameAsString() == "std::tie";
        std::vector<std::string> items;
        for (const auto& a : e.args) {
          const Code c = expr(*a);
          items.push_back(!tie && a->type == ir::Type::Tensor ? coerce_levels(c.text, c.levels, l) : c.text);
        }
        return {"std::make_tuple(" + join_args(items) + ")", l};
      }
      case ExprKind::Get:
        return {"std::get<" + std::to_string(e.index) + ">(" + expr(e.arg(0)).text + ")", l};
      case ExprKind::Call:
        return call(e);
    }
    return {e.text, l};
  }

  // The call as the user wrote it, with `args` in place of its arguments.
  std::string plain(const Expr& e, const std::vector<std::string>& args) const {
    switch (e.form) {
      case ir::CallForm::Free:
        return "fg::" + e.op + e.template_args + "(" + join_args(args) + ")";
      case ir::CallForm::Method:
        return paren(args[0]) + "." + e.op + e.template_args + "(" +
               join_args(std::vector<std::string>(args.begin() + 1, args.end())) + ")";
      case ir::CallForm::Operator:
      case ir::CallForm::External:
        if (e.form == ir::CallForm::External && e.text.empty()) return e.op + e.template_args + "(" + join_args(args) + ")";
        if (e.text == "[]") return paren(args[0]) + "[" + unparen(args[1]) + "]";
        if (e.text == "()") return paren(args[0]) + "(" + join_args(std::vector<std::string>(args.begin() + 1, args.end())) + ")";
        if (args.size() == 1) return "(" + e.text + paren(args[0]) + ")";
        if (e.text.size() >= 2 && e.text.back() == '=' && e.text != "==" && e.text != "!=" && e.text != "<=" &&
            e.text != ">=")
          return args[0] + " " + e.text + " " + args[1];
        return "(" + paren(args[0]) + " " + e.text + " " + paren(args[1]) + ")";  // x * (i + 1)
      case ir::CallForm::User:
        return e.callee->getQualifiedNameAsString() + e.template_args + "(" + join_args(args) + ")";
      case ir::CallForm::Vmapped:
        break;  // emitted by vmapped()
    }
    return "";
  }

  static std::string batched(const std::string& text, Levels l) { return "{" + unparen(text) + ", " + mask(l) + "}"; }

  Code call(const Expr& e) {
    const Levels l = an_.of(e);
    std::vector<Code> args;
    for (const auto& a : e.args) args.push_back(expr(*a));
    std::vector<std::string> texts;
    Levels tensors = 0;
    for (size_t i = 0; i < args.size(); ++i) {
      texts.push_back(args[i].text);
      if (ir::is_tensor_like(e.args[i]->type)) tensors |= args[i].levels;
    }
    if (e.form == ir::CallForm::Vmapped) return vmapped(e, args);
    if (e.form == ir::CallForm::User) {
      if (tensors == 0) return {plain(e, texts), l};
      return {specialize(e, texts), l};
    }
    // v[i] on a std::vector of tensors: its elements are stored at the vector's levels.
    if (e.form == ir::CallForm::External && e.text == "[]" && e.args[0]->type == ir::Type::TensorList)
      return {plain(e, texts), l};
    const OpRule rule = e.form == ir::CallForm::External ? OpRule{} : find_rule(e.op);
    if (tensors == 0 && rule.rule != BatchRule::Random) return {plain(e, texts), l};
    const int nb = e.args.empty() ? 0 : nbatch(args[0].levels);

    switch (rule.rule) {
      case BatchRule::Pointwise:
        return pointwise(e, args, texts);
      case BatchRule::Reduce: {
        // max(self, other) and min(self, other) are element-wise.
        for (size_t i = 1; i < e.args.size(); ++i)
          if (e.args[i]->type == ir::Type::Tensor) return pointwise(e, args, texts);
        return reduce(e, texts, nb);
      }
      case BatchRule::Dims:
        return dims(e, rule, texts, nb);
      case BatchRule::Size: {
        const std::string self = bind(args[0], "self");
        texts[0] = self;
        texts[1] = "fg::vmap::batch_shape(" + self + ", " + std::to_string(nb) + ", " + texts[1] + ")";
        return {plain(e, texts), l};
      }
      case BatchRule::Helper:
        return helper(e, args, texts, nb);
      case BatchRule::Factory:
      case BatchRule::Like:
      case BatchRule::Meta:
      case BatchRule::Item:
      case BatchRule::Dynamic:
      case BatchRule::Out:
        return {plain(e, texts), l};
      case BatchRule::Random:
        return random(e, args, texts);
      case BatchRule::Query: {
        const std::string n = std::to_string(nb);
        if (nb == 0) return {plain(e, texts), l};
        if (e.op == "size") return {"fg::vmap::logical_size(" + unparen(texts[0]) + ", " + n + ", " + texts[1] + ")", l};
        if (e.op == "dim" || e.op == "ndimension") return {"fg::vmap::logical_dim(" + unparen(texts[0]) + ", " + n + ")", l};
        if (e.op == "numel") return {"fg::vmap::logical_numel(" + unparen(texts[0]) + ", " + n + ")", l};
        return {"fg::vmap::logical_sizes(" + unparen(texts[0]) + ", " + n + ")", l};
      }
      case BatchRule::None:
        break;
    }
    if (e.form == ir::CallForm::External && e.text.empty()) return unseen(e, args, texts);  // a function, not an operator
    if (e.type != ir::Type::Tensor) return {plain(e, texts), l};  // side effects: diagnosed by the checks
    if (!e.op.empty() && e.op.back() == '_') {
      // A loop of per-example calls would write into slices of copies, not into the tensor.
      ctx_.reporter->report("unsupported", e.range.getBegin(),
                            "in-place '" + e.op + "' has no batching rule, and the per-example fallback cannot write "
                            "in place; use its out-of-place form")
          << e.range;
      return {plain(e, texts), l};
    }
    return fallback(e, args, texts);
  }

  Code pointwise(const Expr& e, const std::vector<Code>& args, std::vector<std::string> texts) {
    std::vector<size_t> operands;
    for (size_t i = 0; i < args.size(); ++i)
      if (e.args[i]->type == ir::Type::Tensor) operands.push_back(i);
    if (operands.size() >= 2) {
      std::vector<std::string> bound, items;
      for (size_t i : operands) {
        bound.push_back(bind(args[i]));
        items.push_back(batched(bound.back(), args[i].levels));
      }
      // The same operand twice (x * x) lines up with itself.
      if (std::all_of(items.begin(), items.end(), [&](const std::string& item) { return item == items[0]; })) {
        for (size_t k = 0; k < operands.size(); ++k) texts[operands[k]] = bound[k];
        return {plain(e, texts), an_.of(e)};
      }
      // Operands already aligned for this statement are aligned once.
      const std::string key = join(items);
      std::vector<std::string>& names = aligned_[key];
      if (names.empty()) {
        for (const auto& name : bound) names.push_back(fresh(name + "_b"));
        pre_.push_back("auto [" + join(names) + "] = fg::vmap::align({" + key + "});");
      }
      for (size_t k = 0; k < operands.size(); ++k) texts[operands[k]] = names[k];
    }
    return {plain(e, texts), an_.of(e)};
  }

  Code reduce(const Expr& e, std::vector<std::string> texts, int nb) {
    const Levels l = an_.of(e);
    if (nb == 0) return {plain(e, texts), l};
    for (size_t i = 1; i < e.args.size(); ++i) {
      if (e.params[i] != "dim") continue;
      if (e.args[i]->type == ir::Type::Int) {
        texts[i] = shift_dim(texts[i], nb);
        return {plain(e, texts), l};
      }
      if (e.args[i]->type == ir::Type::IntList) {
        texts[i] = shift_dims(texts[i], nb);
        return {plain(e, texts), l};
      }
    }
    // Over every logical dim: flatten them into one and reduce over it.
    const std::string flat = "fg::vmap::flatten_logical(" + unparen(texts[0]) + ", " + std::to_string(nb) + ")";
    const std::string d = std::to_string(nb);
    std::vector<std::string> rest(texts.begin() + 1, texts.end());
    if (e.op == "sum" || e.op == "mean")
      return {"fg::" + e.op + "(" + flat + ", {" + d + "}" + (rest.empty() ? "" : ", false, " + rest[0]) + ")", l};
    if (e.op == "amax" || e.op == "max") return {"fg::amax(" + flat + ", {" + d + "})", l};
    if (e.op == "amin" || e.op == "min") return {"fg::amin(" + flat + ", {" + d + "})", l};
    if (e.op == "argmax" || e.op == "argmin") return {"fg::" + e.op + "(" + flat + ", " + d + ")", l};
    if (e.op == "norm") return {"fg::norm(" + flat + ", " + (rest.empty() ? "2" : rest[0]) + ", {" + d + "})", l};
    return {plain(e, texts), l};
  }

  Code dims(const Expr& e, const OpRule& rule, std::vector<std::string> texts, int nb) {
    const Levels l = an_.of(e);
    if (nb == 0) return {plain(e, texts), l};
    if (e.form == ir::CallForm::Operator && e.text == "[]")
      return {paren(texts[0]) + ".select(" + std::to_string(nb) + ", " + texts[1] + ")", l};
    if (e.op == "squeeze" && texts.size() == 1)
      return {"fg::vmap::squeeze_logical(" + unparen(texts[0]) + ", " + std::to_string(nb) + ")", l};
    // Write out every parameter up to the last dim whose default counts from the front.
    size_t last = texts.size() - 1;
    for (size_t p = 0; p < rule.params.size(); ++p) {
      const auto& param = rule.params[p];
      const bool given = p + 1 < texts.size();
      if (given || (param.is_dim && !param.default_value.empty() && param.default_value[0] != '-')) last = std::max(last, p + 1);
    }
    std::vector<std::string> out{texts[0]};
    for (size_t p = 0; p + 1 <= last && p < rule.params.size(); ++p) {
      const auto& param = rule.params[p];
      std::string v = p + 1 < texts.size() ? texts[p + 1] : param.default_value;
      out.push_back(param.is_dim ? shift_dim(v, nb) : v);
    }
    for (size_t p = rule.params.size() + 1; p < texts.size(); ++p) out.push_back(texts[p]);
    return {plain(e, out), l};
  }

  Code helper(const Expr& e, const std::vector<Code>& args, std::vector<std::string> texts, int nb) {
    const Levels l = an_.of(e);
    const std::string n = std::to_string(nb);
    if (e.op == "t") return {"fg::vmap::t(" + unparen(texts[0]) + ", " + n + ")", l};
    if (e.op == "permute") return {"fg::vmap::permute(" + unparen(texts[0]) + ", " + n + ", " + texts[1] + ")", l};
    if (e.op == "expand") return {"fg::vmap::expand(" + unparen(texts[0]) + ", " + n + ", " + texts[1] + ")", l};
    auto b = [&](size_t i) { return texts[i] == "{}" ? texts[i] : batched(texts[i], args[i].levels); };
    auto list = [&](size_t i) {
      const Expr& lst = e.arg(i);
      std::vector<std::string> items;
      for (const auto& item : lst.args) items.push_back(batched(expr(*item).text, an_.of(*item)));
      return "{" + join(items) + "}";
    };
    std::string call;
    if (e.op == "cat" || e.op == "stack") {
      if (e.arg(0).kind != ExprKind::List) return unsupported_list(e, args, texts);
      call = "fg::vmap::" + e.op + "(" + list(0) + ", " + (texts.size() > 1 ? texts[1] : "0") + ")";
    } else if (e.op == "einsum") {
      if (e.arg(1).kind != ExprKind::List) return unsupported_list(e, args, texts);
      call = "fg::vmap::einsum(" + unparen(texts[0]) + ", " + list(1) + ")";
    } else if (e.op == "index_select" || e.op == "gather") {
      call = "fg::vmap::" + e.op + "(" + b(0) + ", " + texts[1] + ", " + b(2) + ")";
    } else if (e.op == "scatter_add") {
      call = "fg::vmap::scatter_add(" + b(0) + ", " + texts[1] + ", " + b(2) + ", " + b(3) + ")";
    } else if (e.op == "linear") {
      call = "fg::vmap::linear(" + b(0) + ", " + b(1) + ", " + (texts.size() > 2 ? b(2) : "{}") + ")";
    } else if (e.op == "mse_loss") {
      call = "fg::vmap::mse_loss(" + b(0) + ", " + b(1) + ", " + (texts.size() > 2 ? texts[2] : "fg::Reduction::Mean") + ")";
    } else if (e.op == "nll_loss" || e.op == "cross_entropy") {
      call = "fg::vmap::" + e.op + "(" + b(0) + ", " + b(1) + ", " + (texts.size() > 2 ? b(2) : "{}") + ", " +
             (texts.size() > 3 ? texts[3] : "fg::Reduction::Mean") + ", " + (texts.size() > 4 ? texts[4] : "-100") + ")";
    } else if (e.op == "ad::add_gradients") {  // one may have no value, so no batch: both given the sum's
      call = "fg::vmap::ad::add_gradients(" + b(0) + ", " + b(1) + ", " + mask(l) + ", " + batch_sizes_of(l) + ")";
    } else if (e.op.rfind("ad::", 0) == 0) {
      // The fg::ad helpers of derivative code: fg::vmap::ad::<op>, tensors as Batched, in order.
      std::vector<std::string> items;
      for (size_t i = 0; i < texts.size(); ++i) items.push_back(e.args[i]->type == ir::Type::Tensor ? b(i) : texts[i]);
      call = "fg::vmap::" + e.op + "(" + join_args(items) + ")";
    } else {  // matmul, mm, bmm, mv, dot, outer
      call = "fg::vmap::" + e.op + "(" + b(0) + ", " + b(1) + ")";
    }
    return {call + ".value", l};
  }

  Code unsupported_list(const Expr& e, const std::vector<Code>& args, const std::vector<std::string>& texts) {
    ctx_.reporter->report("unsupported", e.range.getBegin(),
                          "under vmap, '" + e.op + "' needs its tensors as a braced list ({a, b}) so that each one's batching is known")
        << e.range;
    return {plain(e, texts), an_.of(e)};
  }

  Code random(const Expr& e, const std::vector<Code>& args, std::vector<std::string> texts) {
    const Levels l = an_.of(e);
    const Levels different = an_.vmap().different;
    const std::string fn = e.op == "rand_like" ? "rand" : "randn";
    if (e.op == "randn" || e.op == "rand") {
      if (different != 0 && !texts.empty())
        texts[0] = "fg::vmap::with_batch(" + batch_sizes_of(different) + ", " + texts[0] + ")";
      return {plain(e, texts), l};
    }
    const Levels lx = args[0].levels;
    const std::string nx = std::to_string(nbatch(lx));
    if (e.op == "randn_like" || e.op == "rand_like") {
      if (lx == different) return {plain(e, texts), l};
      const std::string x = bind(args[0], "like");
      std::string sizes = "fg::vmap::logical_sizes(" + x + ", " + nx + ")";
      if (different != 0) sizes = "fg::vmap::with_batch(" + batch_sizes_of(different) + ", " + sizes + ")";
      return {"fg::" + fn + "(" + sizes + ", " + x + ".options())", l};
    }
    // dropout(x, p, train), bernoulli(p): the mask is drawn per example at 'different' levels.
    if (different == 0) {
      if (e.op == "dropout")
        return {"fg::vmap::dropout_same(" + unparen(texts[0]) + ", " + nx + ", " + texts[1] + ", " + (texts.size() > 2 ? texts[2] : "true") + ")", l};
      return {"fg::vmap::bernoulli_same(" + unparen(texts[0]) + ", " + nx + ")", l};
    }
    if ((lx & ~different) != 0) {
      ctx_.reporter->report("unsupported", e.range.getBegin(),
                            "'" + e.op + "' on a tensor batched at a vmap level with randomness='same' inside a vmap with "
                            "randomness='different' cannot be generated yet; use one randomness for both")
          << e.range;
      return {plain(e, texts), l};
    }
    if (lx != different)
      texts[0] = "fg::vmap::materialize(" + unparen(texts[0]) + ", " + mask(lx) + ", " + mask(different) + ", " +
                 batch_sizes_of(different) + ")";
    return {plain(e, texts), l};
  }

  // The batched tensor operands of a per-example call; `texts` then name each one's example.
  static std::vector<std::string> per_example_operands(const Expr& e, const std::vector<Code>& args,
                                                       std::vector<std::string>& texts) {
    std::vector<std::string> operands;
    int k = 0;
    for (size_t i = 0; i < args.size(); ++i) {
      if (e.args[i]->type != ir::Type::Tensor) continue;
      operands.push_back(batched(texts[i], args[i].levels));
      texts[i] = "example__[" + std::to_string(k++) + "]";
    }
    return operands;
  }

  Code fallback(const Expr& e, const std::vector<Code>& args, std::vector<std::string> texts) {
    ctx_.reporter->report("vmap-fallback", e.range.getBegin(),
                          "'" + e.op + "' has no batching rule; under vmap it runs once per example and the results are stacked")
        << e.range;
    const std::vector<std::string> operands = per_example_operands(e, args, texts);
    return {"fg::vmap::per_example({" + join(operands) + "}, [&](const std::vector<fg::Tensor>& example__) { return " +
                plain(e, texts) + "; }).value",
            an_.of(e)};
  }

  // A call of a function whose body funcgen does not see, with batched tensors: it runs once per
  // example whatever it returns (a C++ value per example has nowhere to go, so that is reported).
  Code unseen(const Expr& e, const std::vector<Code>& args, std::vector<std::string> texts) {
    if (e.type == ir::Type::Tensor) return fallback(e, args, texts);
    const std::optional<size_t> outputs = tensor_outputs(e);
    if (!outputs) {
      const std::string type = e.ast != nullptr ? e.ast->getType().getAsString() : "a C++ value";
      ctx_.reporter->report("unsupported", e.range.getBegin(),
                            "'" + e.op + "' is defined where funcgen cannot see it and returns '" + type +
                                "' computed from batched tensors, which under vmap would be one value per example; "
                                "define it in this file or an included header, or return fg::Tensor")
          << e.range;
      return {plain(e, texts), an_.of(e)};
    }
    ctx_.reporter->report("vmap-fallback", e.range.getBegin(),
                          "'" + e.op + "' is defined where funcgen cannot see it; under vmap it runs once per example" +
                              (*outputs > 0 ? " and its results are stacked" : ""))
        << e.range;
    const std::vector<std::string> operands = per_example_operands(e, args, texts);
    const std::string run = "fg::vmap::per_example_outputs({" + join(operands) +
                            "}, [&](const std::vector<fg::Tensor>& example__) { return ";
    if (*outputs == 0)
      return {run + "(" + plain(e, texts) + "), std::vector<fg::Tensor>{}; })", an_.of(e)};
    return {"fg::vmap::values_tuple<" + std::to_string(*outputs) + ">(" + run + "fg::vmap::tensors_of(" +
                plain(e, texts) + "); }))",
            an_.of(e)};
  }

  // How many tensors an unseen call returns: 0 for void, N for a std::tuple or std::pair of N
  // fg::Tensor; nullopt for anything else.
  static std::optional<size_t> tensor_outputs(const Expr& e) {
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

  // vmap(g, in_dims, out_dim)(args) inside the body: g runs as a helper at one more level than this
  // body has (its batch dim after the outer ones: the arguments' in_dims move there), and the
  // output's batch dim moves to out_dim. Emitted once per g and pattern of argument levels.
  Code vmapped(const Expr& e, const std::vector<Code>& args) {
    const BatchingAnalysis* inner = an_.callee(e);
    const ir::Function& g = *e.vmapped;
    const int k = ctx_.nlevels;
    const Levels level = 1u << k;
    const std::string quoted = "\"" + e.op + "\"";
    std::vector<std::string> texts, mapped;
    std::vector<Levels> key;
    const std::string batch = fresh(batch_name(k));
    for (size_t i = 0; i < args.size(); ++i) {
      const bool tensor = e.args[i]->type == ir::Type::Tensor;
      const Levels have = tensor ? args[i].levels : 0;
      if (!tensor || i >= e.in_dims.size() || !e.in_dims[i]) {
        texts.push_back(args[i].text);
        key.push_back(have);
        continue;
      }
      const std::string pname = i < g.params.size() ? g.var(g.params[i]).name : "arg";
      const std::string moved = fresh(pname + "_in");
      pre_.push_back("const fg::Tensor " + moved + " = fg::vmap::move_in(" + unparen(args[i].text) + ", " +
                     std::to_string(*e.in_dims[i]) + ", " + std::to_string(nbatch(have)) + ", " + quoted + ", \"" +
                     pname + "\");");
      mapped.push_back("{\"" + pname + "\", &" + moved + ", " + std::to_string(nbatch(have)) + "}");
      texts.push_back(moved);
      key.push_back(have | level);
    }
    if (inner == nullptr || mapped.empty()) {
      ctx_.reporter->report("unsupported", e.range.getBegin(), "internal error: a vmap of '" + e.op + "' without mapped arguments");
      return {"fg::Tensor()", 0};
    }
    pre_.push_back("const int64_t " + batch + " = fg::vmap::batch_size(" + quoted + ", {" + join(mapped) + "});");
    auto found = ctx_.vmapped.find({&g, key});
    std::string name;
    if (found != ctx_.vmapped.end()) {
      name = found->second;
    } else {
      name = ctx_.spec_name + "__" + e.op;
      for (int i = 1; ctx_.helper_names.count(name) != 0; ++i) name = ctx_.spec_name + "__" + e.op + std::to_string(i);
      ctx_.helper_names.insert(name);
      ctx_.vmapped[{&g, key}] = name;
      EmitContext nested;
      nested.spec_name = ctx_.spec_name;
      nested.nlevels = k + 1;
      nested.reporter = ctx_.reporter;
      nested.helpers = ctx_.helpers;
      nested.helper_names = ctx_.helper_names;
      BodyEmitter emitter(*inner, nested, key, false);
      const std::string body = emitter.body();
      ctx_.helper_names = nested.helper_names;
      *ctx_.helpers += "// " + e.op + ": the function that " + fn_.name + " vmaps, on batched values (level " +
                       std::to_string(k) + " is the vmap's).\n";
      *ctx_.helpers += "static " + signature(g, name, true, k + 1, &body) + " {\n" + body + "}\n\n";
    }
    for (int m = 0; m < k; ++m) texts.push_back(batch_name(m));
    const Levels got = inner->outputs()[static_cast<size_t>(e.index)];
    // out_dims=None: the result, the same for every example, without this level's batch dim.
    if (!e.out_dim && (got & level) != 0) {
      ctx_.reporter->report("spec", e.range.getBegin(), batched_out_dims_none(static_cast<size_t>(e.index), g.name));
      return {"fg::Tensor()", 0};
    }
    const Levels want = e.out_dim ? got | level : got;
    // The helper's output `index` with this level's batch dim, for the examples of `size`.
    const auto output = [&](const std::vector<std::string>& arguments, const std::string& size) {
      std::vector<std::string> all = arguments;
      all.push_back(size);
      std::string r = name + "(" + join(all) + ")";
      if (g.outputs > 1 || g.return_type == ir::Type::TensorTuple) r = "std::get<" + std::to_string(e.index) + ">(" + r + ")";
      if (got == want) return r;
      std::vector<std::string> sizes;
      for (int m = 0; m < k; ++m)
        if (want & (1u << m)) sizes.push_back(batch_name(m));
      sizes.push_back(size);
      return "fg::vmap::materialize(" + r + ", " + mask(got) + ", " + mask(want) + ", {" + join(sizes) + "})";
    };
    if (!e.out_dim) return {output(texts, batch), got};
    std::string o;
    if (!e.chunk_size) {
      o = output(texts, batch);
    } else {  // chunk_size: the helper runs on slices of the mapped arguments, concatenated
      std::vector<std::string> pairs, sliced = texts;
      std::string first;
      for (size_t i = 0, c = 0; i < args.size(); ++i) {
        if (e.args[i]->type != ir::Type::Tensor || i >= e.in_dims.size() || !e.in_dims[i]) continue;
        const std::string dim = std::to_string(nbatch(args[i].levels));
        pairs.push_back("{" + texts[i] + ", " + dim + "}");
        sliced[i] = "chunk__[" + std::to_string(c++) + "]";
        if (first.empty()) first = sliced[i] + ".size(" + dim + ")";
      }
      const std::string rows = fresh(e.op + "_chunks"), size = fresh("chunk" + std::to_string(k));
      pre_.push_back("// chunk_size=" + std::to_string(*e.chunk_size) + ": " + e.op + " runs on at most that many examples at a time");
      pre_.push_back("const std::vector<fg::Tensor> " + rows + " = fg::vmap::chunked(" + std::to_string(*e.chunk_size) +
                     ", " + batch + ", {" + join(pairs) + "}, {" + std::to_string(nbatch(want & (level - 1))) +
                     "}, [&](const std::vector<fg::Tensor>& chunk__) {");
      pre_.push_back("  const int64_t " + size + " = " + first + ";");
      pre_.push_back("  return std::vector<fg::Tensor>{" + output(sliced, size) + "};");
      pre_.push_back("});");
      o = rows + "[0]";
    }
    o = "fg::vmap::move_out(" + o + ", " + std::to_string(nbatch(want & (level - 1))) + ", " + std::to_string(*e.out_dim) +
        ", " + quoted + ")";
    return {o, want & ~level};
  }

  // A user function called with batched arguments: emit its batched version once per pattern.
  std::string specialize(const Expr& e, std::vector<std::string> texts) {
    const BatchingAnalysis* callee = an_.callee(e);
    std::vector<Levels> key;
    for (const auto& a : e.args) key.push_back(an_.of(*a));
    texts.push_back(batch_args(ctx_.nlevels));
    if (callee == nullptr) return plain(e, texts);
    auto it = ctx_.specializations.find({e.callee, key});
    std::string name;
    if (it != ctx_.specializations.end()) {
      name = it->second;
    } else {
      // An operator function (operator*) has no name that can be extended.
      const std::string base = (is_identifier(callee->function().name) ? callee->function().name : "user_operator") + "__" + ctx_.spec_name;
      name = base;
      for (int i = 1; ctx_.helper_names.count(name) != 0; ++i) name = base + std::to_string(i);
      ctx_.helper_names.insert(name);
      ctx_.specializations[{e.callee, key}] = name;
      BodyEmitter inner(*callee, ctx_, key, true);
      const std::string body = inner.body();
      *ctx_.helpers += "// " + callee->function().name + " batched as its call in " + fn_.name + " needs.\n";
      *ctx_.helpers += "static " + signature(callee->function(), name, true, ctx_.nlevels, &body) + " {\n" + body + "}\n\n";
    }
    return name + "(" + join(texts) + ")";
  }

  const BatchingAnalysis& an_;
  const ir::Function& fn_;
  EmitContext& ctx_;
  std::vector<Levels> params_;
  bool helper_ = false;
  std::set<std::string> names_;
  std::vector<std::string> pre_;
  // The aligned names of operand lists that pre_ aligns: valid until pre_ is emitted.
  std::map<std::string, std::vector<std::string>> aligned_;
};


}  // namespace

GeneratedFunction emit_vmap(const std::string& name, const ir::Function& fn, const std::vector<VmapLevel>& levels,
                            const BatchingAnalysis& analysis, Reporter& reporter, const std::string& what) {
  GeneratedFunction g;
  const int nlevels = static_cast<int>(levels.size());
  EmitContext ctx;
  ctx.spec_name = name;
  ctx.nlevels = nlevels;
  ctx.reporter = &reporter;
  ctx.helpers = &g.helpers;

  // The body on physical (batch-dims-in-front) values.
  const std::string body_name = name + "__batched_body";
  std::vector<Levels> param_levels;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    Levels l = 0;
    for (int k = 0; k < nlevels; ++k)
      if (levels[k].in_dims[i]) l |= 1u << k;
    param_levels.push_back(l);
  }
  BodyEmitter body(analysis, ctx, param_levels, false);
  const std::string body_text = body.body();
  g.helpers += "// " + (what.empty() ? fn.name : what) + " on batched values: one batch dim per vmap level in front.\n";
  g.helpers += "static " + signature(fn, body_name, true, nlevels, &body_text) + " {\n" + body_text + "}\n\n";

  g.declaration = signature(fn, name, false, 0) + ";";

  std::string d;
  d += signature(fn, name, false, 0) + " {\n";
  const std::string quoted = "\"" + name + "\"";
  // Arguments in: each level's batch dim moves to the front, in level order.
  std::vector<std::string> arg_names;
  std::vector<Levels> arg_levels;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ir::Var& v = fn.var(fn.params[i]);
    Levels lv = 0;
    std::string current = v.name;
    for (int k = 0; k < nlevels; ++k) {
      const spec::Dim dim = levels[k].in_dims[i];
      if (!dim) continue;
      const std::string next = v.name + "_in__";
      d += "  " + std::string(current == v.name ? "fg::Tensor " : "") + next + " = fg::vmap::move_in(" + current + ", " +
           std::to_string(*dim) + ", " + std::to_string(nbatch(lv)) + ", " + quoted + ", \"" + v.name + "\");" +
           "  // in_dims level " + std::to_string(k) + "\n";
      current = next;
      lv |= 1u << k;
    }
    arg_names.push_back(current);
    arg_levels.push_back(lv);
  }
  for (int k = 0; k < nlevels; ++k) {
    std::vector<std::string> mapped;
    for (size_t i = 0; i < fn.params.size(); ++i) {
      if (!(arg_levels[i] & (1u << k))) continue;
      const int pos = nbatch(arg_levels[i] & ((1u << k) - 1));
      mapped.push_back("{\"" + fn.var(fn.params[i]).name + "\", &" + arg_names[i] + ", " + std::to_string(pos) + "}");
    }
    d += "  const int64_t " + batch_name(k) + " = fg::vmap::batch_size(" + quoted + ", {" + join(mapped) + "});\n";
  }

  // Outputs: every output gets the batch dims its out_dims ask for, then they move into place.
  const std::vector<Levels>& out_levels = analysis.outputs();
  std::vector<Levels> want(fn.outputs, 0);
  for (size_t j = 0; j < fn.outputs; ++j) {
    for (int k = 0; k < nlevels; ++k) {
      if (levels[k].out_dims[j]) {
        want[j] |= 1u << k;
      } else if (out_levels[j] & (1u << k)) {
        reporter.report("spec", out_dims_location(levels[k], j), batched_out_dims_none(j, fn.name));
      }
    }
  }
  const bool tuple = fn.return_type == ir::Type::TensorTuple;
  std::vector<std::string> call_args = arg_names;
  call_args.push_back(batch_args(nlevels));
  auto finish = [&](const std::string& result, std::vector<std::string>& outs) {
    for (size_t j = 0; j < fn.outputs; ++j) {
      std::string o = tuple ? "std::get<" + std::to_string(j) + ">(" + result + ")" : result;
      if (out_levels[j] != want[j])
        o = "fg::vmap::materialize(" + o + ", " + mask(out_levels[j]) + ", " + mask(want[j]) + ", " + batch_sizes_of(want[j]) + ")";
      outs.push_back(o);
    }
  };

  // chunk_size: the outermost level that asks for it runs its batch in chunks.
  int chunk_level = -1;
  for (int k = 0; k < nlevels && chunk_level < 0; ++k)
    if (levels[k].chunk_size) chunk_level = k;
  std::vector<std::string> outs;
  if (chunk_level < 0) {
    d += "  const auto result__ = " + body_name + "(" + join(call_args) + ");\n";
    finish("result__", outs);
  } else {
    const int k = chunk_level;
    const std::string batch_k = batch_name(k);
    std::vector<std::string> pairs, positions, inner_args;
    int t = 0;
    for (size_t i = 0; i < fn.params.size(); ++i) {
      if (fn.var(fn.params[i]).type != ir::Type::Tensor) {
        inner_args.push_back(arg_names[i]);
        continue;
      }
      const bool mapped = arg_levels[i] & (1u << k);
      pairs.push_back("{" + arg_names[i] + ", " + (mapped ? std::to_string(nbatch(arg_levels[i] & ((1u << k) - 1))) : "-1") + "}");
      inner_args.push_back("chunk__[" + std::to_string(t++) + "]");
    }
    // Outputs batched at level k are concatenated along its dim; the others are the same in every
    // chunk and are kept as the chunks compute them.
    std::vector<int> slot(fn.outputs, -1);
    std::vector<std::string> kept;
    for (size_t j = 0; j < fn.outputs; ++j) {
      if (want[j] & (1u << k)) {
        slot[j] = static_cast<int>(positions.size());
        positions.push_back(std::to_string(nbatch(want[j] & ((1u << k) - 1))));
      } else {
        kept.push_back("output" + std::to_string(j) + "__");
      }
    }
    for (int m = 0; m < nlevels; ++m) inner_args.push_back(batch_name(m));
    std::string first_mapped;
    for (size_t i = 0, c = 0; i < fn.params.size(); ++i) {
      if (fn.var(fn.params[i]).type != ir::Type::Tensor) continue;
      if ((arg_levels[i] & (1u << k)) && first_mapped.empty())
        first_mapped = "chunk__[" + std::to_string(c) + "].size(" + std::to_string(nbatch(arg_levels[i] & ((1u << k) - 1))) + ")";
      ++c;
    }
    const bool same = levels[k].randomness == spec::Randomness::Same;
    std::vector<std::string> chunk_outs;
    d += "  // chunk_size=" + std::to_string(*levels[k].chunk_size) + ": level " + std::to_string(k) + " runs in chunks\n";
    if (!kept.empty()) d += "  fg::Tensor " + join(kept) + ";  // not batched at level " + std::to_string(k) + "\n";
    if (same)
      d += "  // randomness='same': every chunk draws the values the first one draws, as torch.func does\n"
           "  const uint64_t rng_seed__ = fg::default_generator().seed(), rng_offset__ = fg::default_generator().offset();\n";
    d += "  const std::vector<fg::Tensor> result__ = fg::vmap::chunked(" + std::to_string(*levels[k].chunk_size) + ", " +
         batch_k + ", {" + join(pairs) + "}, {" + join(positions) + "}, [&](const std::vector<fg::Tensor>& chunk__) {\n";
    if (same) {
      d += "    fg::default_generator().manual_seed(rng_seed__);\n";
      d += "    fg::default_generator().reserve_blocks(rng_offset__);\n";
    }
    d += "    const int64_t " + batch_k + " = " + first_mapped + ";  // the size of this chunk\n";
    d += "    const auto part__ = " + body_name + "(" + join(inner_args) + ");\n";
    finish("part__", chunk_outs);
    std::vector<std::string> concatenated;
    for (size_t j = 0; j < fn.outputs; ++j) {
      if (slot[j] >= 0) concatenated.push_back(chunk_outs[j]);
      else d += "    output" + std::to_string(j) + "__ = " + chunk_outs[j] + ";\n";
    }
    d += "    return std::vector<fg::Tensor>{" + join(concatenated) + "};\n";
    d += "  });\n";
    for (size_t j = 0; j < fn.outputs; ++j)
      outs.push_back(slot[j] >= 0 ? "result__[" + std::to_string(slot[j]) + "]" : "output" + std::to_string(j) + "__");
  }
  std::vector<std::string> finals;
  for (size_t j = 0; j < fn.outputs; ++j) {
    std::string o = outs[j];
    // Innermost level first: the outer batch dims stay in front while it moves.
    for (int k = nlevels - 1; k >= 0; --k) {
      if (!levels[k].out_dims[j]) continue;
      o = "fg::vmap::move_out(" + o + ", " + std::to_string(nbatch(want[j] & ((1u << k) - 1))) + ", " +
          std::to_string(*levels[k].out_dims[j]) + ", " + quoted + ")";
    }
    finals.push_back(o);
  }
  d += "  return " + (tuple ? "std::make_tuple(" + join(finals) + ")" : finals[0]) + ";\n}\n";
  g.definition = d;
  return g;
}

std::string emit_plain_body(const ir::Function& fn, const std::string& name, const BatchingAnalysis& analysis,
                            Reporter& reporter, std::string& helpers) {
  const std::vector<Levels> params(fn.params.size(), 0);
  EmitContext ctx;
  ctx.spec_name = name;
  ctx.reporter = &reporter;
  ctx.helpers = &helpers;
  BodyEmitter body(analysis, ctx, params, false);
  return body.body();
}

std::string function_signature(const ir::Function& fn, const std::string& name) { return signature(fn, name, false, 0); }

}  // namespace funcgen
