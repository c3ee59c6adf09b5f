#include "transforms/grad.h"

#include <clang/AST/Expr.h>

#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "emitter/cxx_text.h"

namespace funcgen {

namespace {

using cxx::is_identifier;
using cxx::join;
using cxx::paren;
using ir::Expr;
using ir::ExprKind;
using ir::Stmt;
using ir::StmtKind;

struct Rule {
  std::vector<std::pair<std::string, std::string>> params;  // name, default ("" = none)
  std::map<std::string, std::string> formulas;               // input -> formula
  bool broadcasts = false;
};

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> table = [] {
    std::map<std::string, Rule> t;
    auto params_of = [](const std::string& spec) {
      std::vector<std::pair<std::string, std::string>> out;
      std::stringstream in(spec);
      std::string word;
      while (in >> word) {
        const size_t eq = word.find('=');
        out.emplace_back(word.substr(0, eq), eq == std::string::npos ? "" : word.substr(eq + 1));
      }
      return out;
    };
#define FG_DERIVATIVE(op, param_spec, input, formula) \
  t[#op].params = params_of(param_spec);               \
  t[#op].formulas[#input] = formula;
#define FG_BROADCASTS(op) t[#op].broadcasts = true;
#include "derivatives.def"
#undef FG_DERIVATIVE
#undef FG_BROADCASTS
    return t;
  }();
  return table;
}

// Replaces the identifiers of `formula` that `names` maps (not those after `.` or `::`).
std::string substitute(const std::string& formula, const std::map<std::string, std::string>& names) {
  std::string out;
  for (size_t i = 0; i < formula.size();) {
    const char c = formula[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < formula.size() && (std::isalnum(static_cast<unsigned char>(formula[j])) || formula[j] == '_')) ++j;
      const std::string word = formula.substr(i, j - i);
      const bool member = (i > 0 && formula[i - 1] == '.') || (i > 1 && formula.compare(i - 2, 2, "::") == 0);
      auto it = names.find(word);
      out += (!member && it != names.end()) ? it->second : word;
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// One op of the forward pass, in A-normal form.
struct Node {
  std::string op;
  std::string result;                                  // the value's name
  std::map<std::string, std::string> args;             // parameter -> C++ text
  std::map<std::string, bool> tensor_arg;              // parameter -> whether the text names a value
  const Expr* expr = nullptr;
};

class GradEmitter {
 public:
  GradEmitter(const ir::Function& fn, const std::vector<int64_t>& argnums, Reporter& reporter)
      : fn_(fn), argnums_(argnums), reporter_(reporter) {
    for (const auto& v : fn.vars) names_.insert(v.name);
  }

  bool ok() const { return ok_; }

  // The body of `grad` (and the value, for grad_and_value).
  std::string emit(const std::string& name, bool with_value) {
    for (int id : fn_.params) {
      current_[id] = fn_.var(id).name;
      if (fn_.var(id).type == ir::Type::Tensor) {
        const int index = fn_.var(id).param_index;
        for (int64_t a : argnums_)
          if (a == index) active_.insert(fn_.var(id).name);
      }
    }
    std::string out_value;
    for (const auto& s : fn_.body) {
      if (!ok_) break;
      statement(*s, out_value);
    }
    if (!ok_) return "";
    if (out_value.empty()) {
      fail(fn_.decl->getBeginLoc(), "'" + fn_.name + "' must end in a return of one tensor to be differentiated");
      return "";
    }
    std::string code = forward_;
    code += "  // backward: gradients of the output with respect to each value, last op first\n";
    code += "  fg::ad::check_scalar_output(" + out_value + ", \"" + name + "\");\n";
    const std::string seed = grad_name(out_value);
    code += "  fg::Tensor " + seed + " = fg::ones_like(" + out_value + ");\n";
    declared_.insert(seed);
    for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) code += backward(*it);
    std::vector<std::string> grads;
    for (int64_t a : argnums_) {
      const std::string p = fn_.var(fn_.params[static_cast<size_t>(a)]).name;
      const std::string g = grad_name(p);
      grads.push_back(declared_.count(g) ? g : "fg::zeros_like(" + p + ")");
    }
    const std::string grad_result = grads.size() == 1 && !tuple_argnums_ ? grads[0] : "std::make_tuple(" + join(grads) + ")";
    code += "  return " + (with_value ? "std::make_tuple(" + grad_result + ", " + out_value + ")" : grad_result) + ";\n";
    return code;
  }

  void set_tuple_argnums(bool t) { tuple_argnums_ = t; }

 private:
  void fail(clang::SourceLocation loc, const std::string& message) {
    if (!ok_) return;
    ok_ = false;
    reporter_.report("unsupported", loc, message);
  }

  std::string fresh(const std::string& base) {
    std::string n = base;
    for (int i = 1; names_.count(n) != 0; ++i) n = base + std::to_string(i);
    names_.insert(n);
    return n;
  }

  std::string grad_name(const std::string& value) { return "d_" + value; }

  void statement(const Stmt& s, std::string& out_value) {
    switch (s.kind) {
      case StmtKind::Decl:
      case StmtKind::Assign: {
        const ir::Var& v = fn_.var(s.var);
        if (s.kind == StmtKind::Assign && s.text != "=") {
          fail(s.range.getBegin(), "compound assignment cannot be differentiated yet; write 'x = x + y'");
          return;
        }
        if (!s.expr) {
          fail(s.range.getBegin(), "a tensor declared without a value cannot be differentiated yet");
          return;
        }
        if (v.type != ir::Type::Tensor) {
          if (s.expr->kind != ExprKind::Opaque) {
            fail(s.range.getBegin(), "scalar computed from tensors cannot be differentiated yet");
            return;
          }
          forward_ += "  " + v.cxx_type + " " + v.name + " = " + s.expr->text + ";\n";
          return;
        }
        const std::string value = expr(*s.expr);
        // A new name per assignment: the backward pass needs every version.
        const std::string name = s.kind == StmtKind::Decl && !defined_.count(v.name) ? v.name : fresh(v.name);
        defined_.insert(name);
        forward_ += "  const fg::Tensor " + name + " = " + value + ";\n";
        alias(name, value);
        current_[s.var] = name;
        return;
      }
      case StmtKind::Return:
        if (!s.expr || s.expr->type != ir::Type::Tensor) {
          fail(s.range.getBegin(), "grad needs a function that returns one tensor");
          return;
        }
        out_value = expr(*s.expr);
        if (!is_identifier(out_value)) {
          const std::string n = fresh("out");
          forward_ += "  const fg::Tensor " + n + " = " + out_value + ";\n";
          alias(n, out_value);
          out_value = n;
        }
        return;
      case StmtKind::Opaque:
        forward_ += "  " + s.text + (s.ast != nullptr && llvm::isa<clang::Expr>(s.ast) ? ";" : "") + "\n";
        return;
      default:
        fail(s.range.getBegin(), "this statement cannot be differentiated yet (straight-line code only for now)");
        return;
    }
  }

  // `name` holds the same value as `value` (a name): gradients flow through.
  void alias(const std::string& name, const std::string& value) {
    if (!is_identifier(value) || name == value) return;
    if (active_.count(value)) {
      active_.insert(name);
      nodes_.push_back(Node{"=", name, {{"self", value}}, {{"self", true}}, nullptr});
    }
  }

  // Emits the value of `e` (a name, or C++ text for constants).
  std::string expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::VarRef:
        return current_.count(e.var) ? current_[e.var] : fn_.var(e.var).name;
      case ExprKind::Opaque:
        return e.text;
      case ExprKind::List: {
        std::vector<std::string> items;
        for (const auto& a : e.args) items.push_back(expr(*a));
        return "{" + join(items) + "}";
      }
      case ExprKind::Call:
        return call(e);
      default:
        fail(e.range.getBegin(), "this expression cannot be differentiated yet");
        return "";
    }
  }

  std::string call(const Expr& e) {
    if (e.form == ir::CallForm::User || e.form == ir::CallForm::External) {
      fail(e.range.getBegin(), "calls of '" + e.op + "' cannot be differentiated yet");
      return "";
    }
    std::vector<std::string> texts;
    for (const auto& a : e.args) texts.push_back(expr(*a));
    if (!ok_) return "";
    // Operators as the runtime op they call; a scalar on the left is the op's `other`.
    std::string op = e.op;
    std::vector<std::string> params = e.params;
    std::vector<bool> tensors;
    for (const auto& a : e.args) tensors.push_back(a->type == ir::Type::Tensor);
    std::string call_text;
    if (e.form == ir::CallForm::Operator) {
      if (e.args.size() == 2 && !tensors[0] && tensors[1]) {
        if (op == "sub") op = "rsub";
        if (op == "div") op = "rdiv";
        params = {"other", "self"};
      } else if (e.args.size() == 2) {
        params = {"self", "other"};
      } else {
        params = {"self"};
      }
      call_text = e.args.size() == 2 ? paren(texts[0]) + " " + e.text + " " + paren(texts[1]) : e.text + paren(texts[0]);
    } else if (e.form == ir::CallForm::Method) {
      std::vector<std::string> rest(texts.begin() + 1, texts.end());
      call_text = paren(texts[0]) + "." + e.op + e.template_args + "(" + join(rest) + ")";
    } else {
      call_text = "fg::" + e.op + e.template_args + "(" + join(texts) + ")";
    }
    bool any_active = false;
    for (size_t i = 0; i < texts.size(); ++i) any_active |= tensors[i] && active_.count(texts[i]);
    if (e.type != ir::Type::Tensor || !any_active) return call_text;  // a constant of the derivative
    const auto it = rules().find(op);
    if (it == rules().end()) {
      fail(e.range.getBegin(), "'" + op + "' has no derivative rule yet");
      return "";
    }
    Node n;
    n.op = op;
    n.expr = &e;
    n.result = fresh("t");
    for (size_t i = 0; i < texts.size(); ++i) {
      n.args[params[i]] = texts[i];
      n.tensor_arg[params[i]] = tensors[i];
    }
    forward_ += "  const fg::Tensor " + n.result + " = " + call_text + ";\n";
    active_.insert(n.result);
    nodes_.push_back(n);
    return n.result;
  }

  void accumulate(std::string& code, const std::string& target, const std::string& contribution) {
    const std::string g = grad_name(target);
    if (declared_.insert(g).second) {
      code += "  fg::Tensor " + g + " = " + contribution + ";\n";
    } else {
      code += "  " + g + " = " + g + " + " + paren(contribution) + ";\n";
    }
  }

  std::string backward(const Node& n) {
    const std::string g = grad_name(n.result);
    if (!declared_.count(g)) return "";  // the output does not depend on this value
    std::string code;
    if (n.op == "=") {
      accumulate(code, n.args.at("self"), g);
      return code;
    }
    const Rule& rule = rules().at(n.op);
    std::map<std::string, std::string> names = n.args;
    names["grad"] = g;
    names["result"] = n.result;
    for (const auto& [param, def] : rule.params)
      if (!names.count(param)) names[param] = def;
    for (const auto& [input, formula] : rule.formulas) {
      auto a = n.args.find(input);
      if (a == n.args.end() || !n.tensor_arg.at(input) || !active_.count(a->second)) continue;
      std::string contribution = substitute(formula, names);
      if (rule.broadcasts) contribution = "fg::ad::sum_to(" + contribution + ", " + a->second + ".sizes())";
      accumulate(code, a->second, contribution);
    }
    return code;
  }

  const ir::Function& fn_;
  std::vector<int64_t> argnums_;
  Reporter& reporter_;
  bool ok_ = true;
  bool tuple_argnums_ = false;
  std::set<std::string> names_, defined_, active_, declared_;
  std::map<int, std::string> current_;
  std::vector<Node> nodes_;
  std::string forward_;
};

}  // namespace

bool is_grad_spec(const AnnotatedSpec& spec) {
  const spec::Transform& t = *spec.transform;
  return (t.kind == spec::TransformKind::Grad || t.kind == spec::TransformKind::GradAndValue) && t.inner &&
         t.inner->kind == spec::TransformKind::Function && !t.has_aux;
}

std::optional<GeneratedFunction> emit_grad(const AnnotatedSpec& spec, const ir::Function& fn, Reporter& reporter) {
  const spec::Transform& t = *spec.transform;
  if (t.inner->function != fn.name) {
    reporter.report("unsupported", spec.spec_locations.at(t.inner->offset),
                    "grad of an earlier spec is not generated yet; name the annotated function");
    return std::nullopt;
  }
  GradEmitter emitter(fn, t.argnums.argnums, reporter);
  emitter.set_tuple_argnums(t.argnums.is_tuple);
  const bool with_value = t.kind == spec::TransformKind::GradAndValue;
  const std::string body = emitter.emit(spec.name, with_value);
  if (!emitter.ok()) return std::nullopt;
  GeneratedFunction g;
  std::vector<std::string> grads;
  for (size_t i = 0; i < t.argnums.argnums.size(); ++i) grads.push_back("fg::Tensor");
  std::string grad_type = grads.size() == 1 && !t.argnums.is_tuple ? "fg::Tensor" : "std::tuple<" + join(grads) + ">";
  const std::string ret = with_value ? "std::tuple<" + grad_type + ", fg::Tensor>" : grad_type;
  std::vector<std::string> params;
  for (int id : fn.params) {
    const ir::Var& v = fn.var(id);
    params.push_back(v.cxx_type + (v.cxx_type.back() == '&' ? "" : " ") + v.name);
  }
  const std::string signature = ret + " " + spec.name + "(" + join(params) + ")";
  g.declaration = signature + ";";
  g.definition = "// " + std::string(spec::name_of(t.kind)) + " of " + fn.name +
                 ": its forward pass, then the derivative rules of templates/derivatives.def in reverse.\n" +
                 signature + " {\n  // forward\n" + body + "}\n";
  return g;
}

}  // namespace funcgen
