#include "ops/batching_rules.h"

#include <map>

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

OpRule make(const Entry& e) {
  OpRule r;
  r.rule = e.rule;
  r.params = parse_op_params(e.params);
  return r;
}

}  // namespace

OpRule find_rule(const std::string& op) {
  const auto& t = table();
  if (auto it = t.find(op); it != t.end()) {
    OpRule r = make(it->second);
    r.inplace = op == "copy_" || op == "zero_" || op == "fill_";
    return r;
  }
  if (op.size() > 4 && op.compare(op.size() - 4, 4, "_out") == 0) {
    OpRule r;
    r.rule = BatchRule::Out;
    return r;
  }
  if (op.size() > 1 && op.back() == '_') {
    auto it = t.find(op.substr(0, op.size() - 1));
    if (it != t.end() && it->second.rule == BatchRule::Pointwise) {
      OpRule r = make(it->second);
      r.rule = BatchRule::Pointwise;
      r.inplace = true;
      return r;
    }
  }
  return OpRule{};
}

}  // namespace funcgen
