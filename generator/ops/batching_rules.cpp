#include "ops/batching_rules.h"

#include <map>

#include <llvm/Support/ErrorHandling.h>
#include <llvm/ADT/Twine.h>

#include "ops/derivative_rules.h"
#include "ops/inplace.h"

namespace funcgen {
namespace {

struct Entry {
  BatchRule rule;
  const char* params;
};

const std::map<std::string, Entry>& table() {
  static const std::map<std::string, Entry> t = {
#define FG_VMAP(op, rule, params) {#op, {BatchRule::rule, params}},
#include "batching_rules.def"
#undef FG_VMAP
  };
  return t;
}

// A list that ends in `...` goes on with the op's FG_PARAMS row (templates/derivatives.def), so that
// a signature and its defaults are written once.
OpRule make(const std::string& op, const Entry& e) {
  OpRule r;
  r.rule = e.rule;
  r.params = parse_op_params(e.params);
  if (!r.params.empty() && r.params.back().name == "...") {
    r.params.pop_back();
    const ad::Rule* derivative = ad::find_rule(op);
    if (derivative == nullptr || derivative->params.empty())
      llvm::report_fatal_error(llvm::Twine("templates/batching_rules.def: '") + op +
                               "' ends its parameters in '...' but has no FG_PARAMS row in derivatives.def");
    r.params.insert(r.params.end(), derivative->params.begin(), derivative->params.end());
  }
  return r;
}

// The rule of an op without its in-place fact.
OpRule rule_of(const std::string& op) {
  const auto& t = table();
  if (auto it = t.find(op); it != t.end()) return make(op, it->second);
  OpRule r;
  if (op.size() > 4 && op.compare(op.size() - 4, 4, "_out") == 0) {
    r.rule = BatchRule::Out;
  } else if (op.size() > 1 && op.back() == '_') {
    auto it = t.find(op.substr(0, op.size() - 1));
    if (it != t.end() && it->second.rule == BatchRule::Pointwise) {
      r = make(it->first, it->second);
      r.inplace = true;  // add_ is add's line, in place
    }
  }
  return r;
}

}  // namespace

OpRule find_rule(const std::string& op) {
  OpRule r = rule_of(op);
  if (listed_inplace(op)) r.inplace = true;  // copy_, zero_, fill_ (their own lines), scatter_add_
  return r;
}

}  // namespace funcgen
