// The derivative rules of templates/derivatives.def, and their formulas as IR: a formula is parsed
// into funcgen's IR with each call resolved against the runtime's declarations in the translation
// unit (so calls made by derivative code carry parameter names and types exactly like the user's
// calls, and can be vmapped and differentiated again).
#pragma once

#include <clang/AST/ASTContext.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ops/op_params.h"

namespace funcgen::ad {

struct Rule {
  std::vector<OpParam> params;             // the non-tensor parameters that formulas name
  std::map<std::string, std::string> vjp;  // input -> formula in `grad`
  std::map<std::string, std::string> jvp;  // input -> formula in `tangent`
  std::set<std::string> shape_only;        // inputs whose values do not matter
  bool broadcasts = false;
  bool constant = false;
  bool from_equation = false;      // einsum: rules derived from the equation (einsum_rules.h)
  bool auto_element_wise = false;  // no jvp rows: each input's JVP is its VJP formula (jvp_of)
  // FG_DECOMPOSE rows: AD differentiates the op as the steps of the first row whose guard holds.
  // A guard is "" or words `p` / `!p` that must all hold: a bool parameter literally true, a
  // tensor present, another parameter given.
  struct Step {
    std::string guard;  // a step whose guard fails is skipped: its name is the value so far
    std::string name, formula;
  };
  struct Decomposition {
    std::string guard;
    std::vector<Step> steps;  // `[guard] name = formula`, in order; the last one is the result
  };
  std::vector<Decomposition> decompositions;
  std::string no_decomposition;  // FG_NO_DECOMPOSITION: why no row applies, and what to do
};

// The rule of a runtime op (by the IR's op name: "mul", "ad::sum_to"), or nullptr.
const Rule* find_rule(const std::string& op);

// An input's forward-mode formula and the name in it that stands for the input's tangent: its
// FG_JVP formula in `tangent`, or, for an FG_AUTO_ELEMENT_WISE op, its VJP formula in `grad`.
// `text` is nullptr when the input has no forward-mode rule.
struct JvpFormula {
  const std::string* text = nullptr;
  std::string tangent = "tangent";
};
JvpFormula jvp_of(const Rule& rule, const std::string& input);

// Resolves the calls that formulas make against the fg declarations visible in the translation
// unit (funcgen/funcgen.h declares them all).
class OpResolver {
 public:
  explicit OpResolver(clang::ASTContext& context) : context_(context) {}
  // Fills in callee, params, param_types and type of a Free or Method call from its op and its
  // arguments' types; false when no declaration fits.
  bool resolve(ir::Expr& call) const;

  // The user's derivative rules (FUNCGEN("custom_vjp(f)") before a rule): primal -> rule.
  void add_custom_rule(bool vjp, const clang::FunctionDecl* primal, const clang::FunctionDecl* rule) {
    (vjp ? custom_vjp_ : custom_jvp_)[primal->getCanonicalDecl()] = rule;
  }
  const clang::FunctionDecl* custom_vjp(const clang::FunctionDecl* f) const { return find(custom_vjp_, f); }
  const clang::FunctionDecl* custom_jvp(const clang::FunctionDecl* f) const { return find(custom_jvp_, f); }
  bool has_custom_rule(const clang::FunctionDecl* f) const { return custom_vjp(f) != nullptr || custom_jvp(f) != nullptr; }

  // The functions this file's specs generate, by name: the spec as written ("jac = jacrev(f)"), for
  // a call of one that a transform cannot see into.
  void add_generated(const std::string& name, const std::string& spec) { generated_[name] = spec; }
  const std::string* generated(const std::string& name) const {
    auto it = generated_.find(name);
    return it == generated_.end() ? nullptr : &it->second;
  }

 private:
  using RuleMap = std::map<const clang::FunctionDecl*, const clang::FunctionDecl*>;
  static const clang::FunctionDecl* find(const RuleMap& m, const clang::FunctionDecl* f) {
    if (f == nullptr) return nullptr;
    auto it = m.find(f->getCanonicalDecl());
    return it == m.end() ? nullptr : it->second;
  }
  RuleMap custom_vjp_, custom_jvp_;
  std::map<std::string, std::string> generated_;
  const clang::DeclContext* namespace_of(const std::string& qualified) const;
  clang::ASTContext& context_;
};

// A call of a function of the user's (a custom rule, or a function that has one).
ir::ExprPtr user_call(const clang::FunctionDecl* callee, std::vector<ir::ExprPtr> args);

// Values a formula can name: `grad`/`tangent`/`result` and the op's parameters.
using FormulaEnv = std::map<std::string, const ir::Expr*>;

// The formula as an IR expression, with the names of `env` replaced by copies of their values; an
// error message when it cannot be parsed or a call does not resolve.
struct FormulaResult {
  ir::ExprPtr expr;
  std::string error;
};
FormulaResult instantiate(const std::string& formula, const FormulaEnv& env, const OpResolver& resolver);

// One call as its rule sees it: the op (`s - x` is rsub), the rule, the parameter name of each
// argument, and parameters that the call's form fixes (`x[i]` is select with dim 0).
struct OpView {
  std::string op;
  const Rule* rule = nullptr;
  std::vector<std::string> params;
  std::vector<std::pair<std::string, std::string>> implied;
};
OpView view_of_call(const ir::Expr& call);

// The names a formula of `call` can use: its parameters as given, implied or defaulted (their
// values made into `keep`). Returns "" or why a default does not parse.
std::string formula_env(const ir::Expr& call, const OpView& v, const OpResolver& resolver,
                        std::vector<ir::ExprPtr>& keep, FormulaEnv& env);

}  // namespace funcgen::ad
