#include "ops/batching_rules.h"

#include <map>
#include <sstream>

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

bool is_dim_name(const std::string& n) {
  return n == "dim" || n == "dim0" || n == "dim1" || n == "dim2" || n == "start_dim" || n == "end_dim" ||
         n == "source" || n == "destination";
}

OpRule make(const Entry& e) {
  OpRule r;
  r.rule = e.rule;
  std::stringstream in(e.params);
  std::string word;
  while (in >> word) {
    OpRule::Param p;
    const size_t eq = word.find('=');
    p.name = word.substr(0, eq);
    if (eq != std::string::npos) p.default_value = word.substr(eq + 1);
    p.is_dim = is_dim_name(p.name);
    r.params.push_back(p);
  }
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
