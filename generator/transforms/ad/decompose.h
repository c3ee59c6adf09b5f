// Op decomposition, for the normalizer (anf.h): an op with FG_DECOMPOSE rows as the ops of the
// row that applies.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "ops/derivative_rules.h"
#include "transforms/ad/normal_form.h"

namespace funcgen::ad::anf {

class Decomposer {
 public:
  explicit Decomposer(NormalForm& form) : form_(form) {}

  // An op with FG_DECOMPOSE rows (layer_norm, dropout, ...) as the steps of the first row whose
  // guard holds, each formula made into statements of one op each: AD then differentiates ops
  // that have rules, at every order, and their forward computes what the op computes.
  // `call` is `e` on its arguments' versions; the result's version.
  int run(const Expr& e, const Expr& call, const Rule& rule, std::vector<ir::StmtPtr>& out, const std::string& name);

 private:
  static bool names(const std::string& formula, const std::string& word);
  // The parameters of the call's op that are tensors (optional ones included), by its declaration.
  static std::vector<std::string> tensor_params(const Expr& call);
  bool names_absent(const std::string& formula) const;
  void bind_step(const std::string& step, ExprPtr x, std::vector<ExprPtr>& keep, FormulaEnv& env);
  // A row's guard: words `p` (a literal true, a tensor given, or a number given other than its
  // FG_PARAMS default: dropout_p=0.0 draws no mask, padding_idx=0 is a padding row) and `!p`, all
  // holding;
  // nullopt when a flag is not a literal (undecided_ names it).
  std::optional<bool> guard_holds(const std::string& guard, const FormulaEnv& env, const std::set<std::string>& given);
  // Whether a number argument is written as its parameter's default (the same literal value).
  bool at_default(const std::string& param, const Expr& e) const;
  // `name = <formula>` as statements of one tensor op each: the tensor-valued calls inside the
  // formula first, each in a variable of its own.
  int emit_tree(const std::string& name, ExprPtr x, const Expr& at, std::vector<ir::StmtPtr>& out);
  void atomize(Expr& x, const Expr& at, std::vector<ir::StmtPtr>& out);

  NormalForm& form_;
  std::set<std::string> absent_;                 // the decomposed call's optional tensors left out
  std::map<std::string, std::string> defaults_;  // the decomposed op's FG_PARAMS defaults
  std::string undecided_;
  std::set<std::string> bool_params_;  // the decomposed call's bool parameters (its flags)
};

}  // namespace funcgen::ad::anf
