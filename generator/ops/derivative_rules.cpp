#include "ops/derivative_rules.h"

#include <clang/AST/DeclCXX.h>
#include <llvm/ADT/Twine.h>
#include <llvm/Support/ErrorHandling.h>

#include <cctype>
#include <sstream>

#include "ir/types.h"
#include "ir/build.h"

namespace funcgen::ad {

namespace {

// "a = f(x); [flag] b = g(a)" as its steps; a step that is not `[guard] name = formula` is a table
// error, found at once.
std::vector<Rule::Step> parse_steps(const char* op, const std::string& text) {
  const auto trim = [](const std::string& x) {
    const size_t b = x.find_first_not_of(' '), e = x.find_last_not_of(' ');
    return b == std::string::npos ? std::string() : x.substr(b, e + 1 - b);
  };
  std::vector<Rule::Step> steps;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    std::string step = trim(text.substr(start, end - start));
    start = end + 1;
    Rule::Step s;
    if (!step.empty() && step[0] == '[' && step.find(']') != std::string::npos) {
      s.guard = trim(step.substr(1, step.find(']') - 1));
      step = trim(step.substr(step.find(']') + 1));
    }
    const size_t eq = step.find('=');
    s.name = eq == std::string::npos ? "" : trim(step.substr(0, eq));
    if (s.name.empty() || step.compare(eq, 2, "==") == 0 || s.name.find(' ') != std::string::npos)
      llvm::report_fatal_error(llvm::Twine("templates/derivatives.def: FG_DECOMPOSE(") + op + "): '" + step +
                               "' is not `[guard] name = formula`");
    s.formula = trim(step.substr(eq + 1));
    steps.push_back(std::move(s));
  }
  return steps;
}

const std::map<std::string, Rule>& table() {
  static const std::map<std::string, Rule> rules = [] {
    std::map<std::string, Rule> t;
#define FG_PARAMS(op, spec) t[#op].params = parse_op_params(spec);
#define FG_VJP(op, input, formula) t[#op].vjp[#input] = formula;
#define FG_JVP(op, input, formula) t[#op].jvp[#input] = formula;
#define FG_BROADCASTS(op) t[#op].broadcasts = true;
#define FG_CONSTANT(op) t[#op].constant = true;
#define FG_SHAPE_ONLY(op, input) t[#op].shape_only.insert(#input);
#define FG_FROM_EQUATION(op) t[#op].from_equation = true;
#define FG_AUTO_ELEMENT_WISE(op) t[#op].auto_element_wise = true;
#define FG_DECOMPOSE(op, guard, steps) t[#op].decompositions.push_back({guard, parse_steps(#op, steps)});
#define FG_NO_DECOMPOSITION(op, message) t[#op].no_decomposition = message;
#include "derivatives.def"
#undef FG_NO_DECOMPOSITION
#undef FG_DECOMPOSE
#undef FG_AUTO_ELEMENT_WISE
#undef FG_FROM_EQUATION
#undef FG_SHAPE_ONLY
#undef FG_PARAMS
#undef FG_VJP
#undef FG_JVP
#undef FG_BROADCASTS
#undef FG_CONSTANT
    for (const auto& [op, rule] : t)
      if (rule.auto_element_wise && !rule.jvp.empty())  // one JVP per input: a table error, found at once
        llvm::report_fatal_error(llvm::Twine("templates/derivatives.def: '") + op +
                                 "' is FG_AUTO_ELEMENT_WISE and has FG_JVP rows too");
    return t;
  }();
  return rules;
}

// ---------------------------------------------------------------- formula parser

struct Token {
  enum Kind { Name, Number, String, Punct, End } kind = End;
  std::string text;
};

std::vector<Token> tokenize(const std::string& s, std::string& error) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' ||
                              (s[j] == ':' && j + 1 < s.size() && s[j + 1] == ':'))) {
        j += s[j] == ':' ? 2 : 1;
      }
      out.push_back({Token::Name, s.substr(i, j - i)});
      i = j;
    } else if (c == '"') {  // a string literal (gelu's approximate="none"), kept as written
      const size_t j = s.find('"', i + 1);
      if (j == std::string::npos) {
        error = "unterminated string literal";
        return {};
      }
      out.push_back({Token::String, s.substr(i, j + 1 - i)});
      i = j + 1;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
      out.push_back({Token::Number, s.substr(i, j - i)});
      i = j;
    } else {
      static const char* two[] = {">=", "<=", "==", "!="};
      std::string p(1, c);
      for (const char* t : two)
        if (s.compare(i, 2, t) == 0) p = t;
      if (std::string("(){},.+-*/<>").find(c) == std::string::npos && p.size() == 1) {
        error = "unexpected character '" + p + "'";
        return {};
      }
      out.push_back({Token::Punct, p});
      i += p.size();
    }
  }
  out.push_back({Token::End, ""});
  return out;
}

const char* op_of(const std::string& symbol, bool unary) {
  if (unary) return symbol == "-" ? "neg" : nullptr;
  static const std::map<std::string, const char*> ops = {{"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "div"},
                                                         {">", "gt"},  {"<", "lt"},  {">=", "ge"}, {"<=", "le"},
                                                         {"==", "eq"}, {"!=", "ne"}};
  auto it = ops.find(symbol);
  return it == ops.end() ? nullptr : it->second;
}

class FormulaParser {
 public:
  FormulaParser(const std::string& text, const FormulaEnv& env, const OpResolver& resolver)
      : env_(env), resolver_(resolver) {
    tokens_ = tokenize(text, error_);
  }

  FormulaResult parse() {
    FormulaResult r;
    if (error_.empty()) {
      r.expr = comparison();
      if (error_.empty() && peek().kind != Token::End) error_ = "unexpected '" + peek().text + "'";
    }
    r.error = error_;
    if (!error_.empty()) r.expr = nullptr;
    return r;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  bool accept(const std::string& punct) {
    if (peek().kind == Token::Punct && peek().text == punct) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(const std::string& punct) {
    if (!accept(punct) && error_.empty()) error_ = "expected '" + punct + "' before '" + peek().text + "'";
  }
  ir::ExprPtr fail(const std::string& message) {
    if (error_.empty()) error_ = message;
    return ir::opaque("0", ir::Type::Int);
  }

  ir::ExprPtr binary(const std::string& symbol, ir::ExprPtr a, ir::ExprPtr b) {
    // x * 1 and x / 1 (a default alpha) are x.
    const auto one = [](const ir::Expr& e) { return e.kind == ir::ExprKind::Opaque && (e.text == "1" || e.text == "1.0"); };
    if ((symbol == "*" || symbol == "/") && one(*b)) return a;
    if (symbol == "*" && one(*a)) return b;
    const bool tensor = a->type == ir::Type::Tensor || b->type == ir::Type::Tensor;
    const bool compare = symbol == ">" || symbol == "<" || symbol == ">=" || symbol == "<=" || symbol == "==" ||
                         symbol == "!=";
    auto x = std::make_unique<ir::Expr>();
    x->text = symbol;
    if (tensor) {
      x->kind = ir::ExprKind::Call;
      x->form = ir::CallForm::Operator;
      x->op = op_of(symbol, false);
      x->type = ir::Type::Tensor;
      x->params = {"self", "other"};
      x->param_types = {a->type, b->type};
    } else {
      x->kind = ir::ExprKind::Binary;
      x->type = compare ? ir::Type::Bool
                        : (a->type == ir::Type::Float || b->type == ir::Type::Float ? ir::Type::Float : ir::Type::Int);
    }
    x->args.push_back(std::move(a));
    x->args.push_back(std::move(b));
    return x;
  }

  ir::ExprPtr comparison() {
    ir::ExprPtr a = additive();
    for (const char* s : {">=", "<=", "==", "!=", ">", "<"})
      if (accept(s)) return binary(s, std::move(a), additive());
    return a;
  }
  ir::ExprPtr additive() {
    ir::ExprPtr a = multiplicative();
    while (error_.empty()) {
      if (accept("+")) a = binary("+", std::move(a), multiplicative());
      else if (accept("-")) a = binary("-", std::move(a), multiplicative());
      else break;
    }
    return a;
  }
  ir::ExprPtr multiplicative() {
    ir::ExprPtr a = unary();
    while (error_.empty()) {
      if (accept("*")) a = binary("*", std::move(a), unary());
      else if (accept("/")) a = binary("/", std::move(a), unary());
      else break;
    }
    return a;
  }
  ir::ExprPtr unary() {
    if (!accept("-")) return postfix();
    ir::ExprPtr a = unary();
    if (a->kind == ir::ExprKind::Opaque && ir::is_scalar(a->type)) {
      a->text = "-" + a->text;
      return a;
    }
    auto x = std::make_unique<ir::Expr>();
    x->text = "-";
    if (a->type == ir::Type::Tensor) {
      x->kind = ir::ExprKind::Call;
      x->form = ir::CallForm::Operator;
      x->op = "neg";
      x->type = ir::Type::Tensor;
      x->params = {"self"};
      x->param_types = {ir::Type::Tensor};
    } else {
      x->kind = ir::ExprKind::Unary;
      x->type = a->type;
    }
    x->args.push_back(std::move(a));
    return x;
  }
  std::vector<ir::ExprPtr> arguments(const std::string& close) {
    std::vector<ir::ExprPtr> args;
    if (accept(close)) return args;
    do {
      args.push_back(comparison());
    } while (error_.empty() && accept(","));
    expect(close);
    return args;
  }
  ir::ExprPtr call(ir::CallForm form, const std::string& op, std::vector<ir::ExprPtr> args) {
    auto x = std::make_unique<ir::Expr>();
    x->kind = ir::ExprKind::Call;
    x->form = form;
    x->op = op;
    x->args = std::move(args);
    if (!resolver_.resolve(*x)) return fail("no declaration of '" + op + "' takes these arguments");
    return x;
  }
  ir::ExprPtr postfix() {
    ir::ExprPtr a = primary();
    while (error_.empty() && accept(".")) {
      if (peek().kind != Token::Name) return fail("expected a method name after '.'");
      const std::string name = tokens_[pos_++].text;
      expect("(");
      std::vector<ir::ExprPtr> args;
      args.push_back(std::move(a));
      for (auto& x : arguments(")")) args.push_back(std::move(x));
      a = call(ir::CallForm::Method, name, std::move(args));
    }
    return a;
  }
  ir::ExprPtr primary() {
    const Token t = peek();
    if (t.kind == Token::Number) {
      ++pos_;
      const bool real = t.text.find_first_of(".eE") != std::string::npos;
      return ir::opaque(t.text, real ? ir::Type::Float : ir::Type::Int);
    }
    if (t.kind == Token::String) {
      ++pos_;
      return ir::opaque(t.text, ir::Type::Other);
    }
    if (accept("(")) {
      ir::ExprPtr e = comparison();
      expect(")");
      return e;
    }
    if (accept("{")) {
      auto x = std::make_unique<ir::Expr>();
      x->kind = ir::ExprKind::List;
      x->args = arguments("}");
      x->type = !x->args.empty() && x->args[0]->type == ir::Type::Tensor ? ir::Type::TensorList : ir::Type::IntList;
      return x;
    }
    if (t.kind != Token::Name) return fail("unexpected '" + t.text + "'");
    ++pos_;
    if (accept("(")) {
      std::vector<ir::ExprPtr> args = arguments(")");
      if (t.text.rfind("fg::ad::", 0) == 0) return call(ir::CallForm::Free, "ad::" + t.text.substr(8), std::move(args));
      if (t.text.rfind("fg::", 0) == 0) return call(ir::CallForm::Free, t.text.substr(4), std::move(args));
      return fail("formulas call fg:: functions and Tensor methods only, not '" + t.text + "'");
    }
    if (auto it = env_.find(t.text); it != env_.end()) return ir::clone(*it->second);
    if (t.text == "true" || t.text == "false") return ir::opaque(t.text, ir::Type::Bool);
    if (t.text.find("::") == std::string::npos) return fail("'" + t.text + "' is not an argument of the call here");
    return ir::opaque(t.text, ir::Type::Other);  // an enumerator or std::nullopt
  }

  const FormulaEnv& env_;
  const OpResolver& resolver_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

const Rule* find_rule(const std::string& op) {
  auto it = table().find(op);
  return it == table().end() ? nullptr : &it->second;
}

JvpFormula jvp_of(const Rule& rule, const std::string& input) {
  JvpFormula f;
  // An element-wise op's VJP is grad times the local derivative, linear in grad: the same formula
  // with the tangent bound to `grad` (in the IR, as the whole name) is the JVP.
  const auto& formulas = rule.auto_element_wise ? rule.vjp : rule.jvp;
  if (rule.auto_element_wise) f.tangent = "grad";
  if (auto it = formulas.find(input); it != formulas.end()) f.text = &it->second;
  return f;
}

const clang::DeclContext* OpResolver::namespace_of(const std::string& qualified) const {
  const clang::DeclContext* dc = context_.getTranslationUnitDecl();
  std::stringstream in(qualified);
  std::string part;
  while (std::getline(in, part, ':')) {
    if (part.empty()) continue;
    const clang::DeclContext* next = nullptr;
    for (const clang::NamedDecl* d : dc->lookup(&context_.Idents.get(part)))
      if (const auto* ns = llvm::dyn_cast<clang::NamespaceDecl>(d)) next = ns;
    if (next == nullptr) return nullptr;
    dc = next;
  }
  return dc;
}

bool OpResolver::resolve(ir::Expr& call) const {
  const bool method = call.form == ir::CallForm::Method;
  const clang::DeclContext* scope = nullptr;
  std::string name = call.op;
  if (method) {
    const clang::DeclContext* fg = namespace_of("fg");
    if (fg == nullptr) return false;
    for (const clang::NamedDecl* d : fg->lookup(&context_.Idents.get("Tensor")))
      if (const auto* rd = llvm::dyn_cast<clang::CXXRecordDecl>(d); rd != nullptr && rd->getDefinition() != nullptr)
        scope = rd->getDefinition();
  } else if (name.rfind("ad::", 0) == 0) {
    scope = namespace_of("fg::ad");
    name = name.substr(4);
  } else {
    scope = namespace_of("fg");
  }
  if (scope == nullptr) return false;
  const size_t skip = method ? 1 : 0;
  const size_t nargs = call.args.size() - skip;
  const clang::FunctionDecl* best = nullptr;
  const clang::FunctionDecl* any = nullptr;
  for (const clang::NamedDecl* d : scope->lookup(&context_.Idents.get(name))) {
    const auto* f = llvm::dyn_cast<clang::FunctionDecl>(d);
    if (f == nullptr || f->getMinRequiredArguments() > nargs || f->getNumParams() < nargs) continue;
    if (any == nullptr) any = f;
    bool match = true;
    for (size_t i = 0; i < nargs; ++i) {
      const ir::Type want = ir_type_of(f->getParamDecl(static_cast<unsigned>(i))->getType());
      const ir::Type have = call.args[i + skip]->type;
      match &= (want == ir::Type::Tensor) == (have == ir::Type::Tensor);
      // A braced list fits a list parameter only (`sum({0})` is the dim overload, not the dtype one).
      if (have == ir::Type::IntList || have == ir::Type::TensorList) match &= want == have;
    }
    if (match) {
      best = f;
      break;
    }
  }
  if (best == nullptr) best = any;
  if (best == nullptr) return false;
  call.callee = best;
  call.type = ir_type_of(best->getReturnType());
  call.params.clear();
  call.param_types.clear();
  if (method) {
    call.params.push_back("self");
    call.param_types.push_back(ir::Type::Tensor);
  }
  for (size_t i = 0; i < nargs; ++i) {
    const clang::ParmVarDecl* p = best->getParamDecl(static_cast<unsigned>(i));
    call.params.push_back(p->getNameAsString());
    call.param_types.push_back(ir_type_of(p->getType()));
  }
  return true;
}

FormulaResult instantiate(const std::string& formula, const FormulaEnv& env, const OpResolver& resolver) {
  return FormulaParser(formula, env, resolver).parse();
}

OpView view_of_call(const ir::Expr& call) {
  OpView v;
  v.op = call.op;
  v.params = call.params;
  if (call.form == ir::CallForm::Operator) {
    const bool scalar_left = call.args.size() == 2 && call.args[0]->type != ir::Type::Tensor &&
                             call.args[1]->type == ir::Type::Tensor;
    if (scalar_left && v.op == "sub") v.op = "rsub";
    if (scalar_left && v.op == "div") v.op = "rdiv";
    v.params = call.args.size() == 1 ? std::vector<std::string>{"self"}
               : scalar_left         ? std::vector<std::string>{"other", "self"}
                                     : std::vector<std::string>{"self", "other"};
    if (call.text == "[]") {  // x[i] is x.select(0, i)
      v.params = {"self", "index"};
      v.implied = {{"dim", "0"}};
    }
  }
  v.params.resize(call.args.size());
  v.rule = find_rule(v.op);
  return v;
}

std::string formula_env(const ir::Expr& call, const OpView& v, const OpResolver& resolver,
                        std::vector<ir::ExprPtr>& keep, FormulaEnv& env) {
  for (size_t i = 0; i < call.args.size(); ++i)
    if (!v.params[i].empty()) env[v.params[i]] = call.args[i].get();
  std::vector<std::pair<std::string, std::string>> values = v.implied;
  if (v.rule != nullptr)
    for (const OpParam& p : v.rule->params)
      if (env.count(p.name) == 0 && !p.default_value.empty()) values.emplace_back(p.name, p.default_value);
  for (const auto& [param, text] : values) {
    if (env.count(param) != 0) continue;
    FormulaResult r = instantiate(text, {}, resolver);
    if (!r.error.empty()) return "'" + param + " = " + text + "': " + r.error;
    keep.push_back(std::move(r.expr));
    env[param] = keep.back().get();
  }
  return "";
}

ir::ExprPtr user_call(const clang::FunctionDecl* callee, std::vector<ir::ExprPtr> args) {
  auto call = std::make_unique<ir::Expr>();
  call->kind = ir::ExprKind::Call;
  call->form = ir::CallForm::User;
  call->callee = callee->getDefinition() != nullptr ? callee->getDefinition() : callee;
  call->op = callee->getNameAsString();
  call->type = ir_type_of(callee->getReturnType());
  for (const clang::ParmVarDecl* p : callee->parameters()) {
    call->params.push_back(p->getNameAsString());
    call->param_types.push_back(ir_type_of(p->getType()));
  }
  call->args = std::move(args);
  return call;
}

}  // namespace funcgen::ad
