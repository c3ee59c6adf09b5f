#include "ops/inplace.h"

#include "ops/batching_rules.h"

#include <map>
#include <set>
#include <sstream>

namespace funcgen {

namespace {

const std::map<std::string, InplaceOp>& table() {
  static const std::map<std::string, InplaceOp> t = {
#define FG_INPLACE(op, partner, kind) {#op, {#partner, InplaceKind::kind}},
#include "inplace.def"
#undef FG_INPLACE
  };
  return t;
}

}  // namespace

std::optional<InplaceOp> listed_inplace(const std::string& op) {
  auto it = table().find(op);
  if (it == table().end()) return std::nullopt;
  return it->second;
}

std::optional<InplaceOp> find_inplace(const std::string& op) {
  if (auto listed = listed_inplace(op)) return listed;
  if (op.size() < 2 || op.back() != '_') return std::nullopt;
  return InplaceOp{op.substr(0, op.size() - 1), InplaceKind::Update};
}

const ArgumentWrites* argument_writes(const std::string& op) {
  static const std::map<std::string, ArgumentWrites> t = [] {
    std::map<std::string, ArgumentWrites> m;
    const auto row = [&](const char* name, const std::string& params, const char* when, const char* source) {
      std::istringstream words(params);
      for (std::string w; words >> w;) m[name].params.push_back(w);
      m[name].when = when;
      m[name].source = source;
    };
#define FG_INPLACE(op, partner, kind)
#define FG_WRITES(op, params, when, source) row(#op, params, #when, #source);
#include "inplace.def"
#undef FG_WRITES
#undef FG_INPLACE
    return m;
  }();
  auto it = t.find(op);
  return it == t.end() ? nullptr : &it->second;
}

bool writes_arguments(const std::string& op) {
  if (op.empty() || op.back() == '_' || argument_writes(op) != nullptr) return true;
  const OpRule rule = find_rule(op);
  return rule.inplace || rule.rule == BatchRule::Out;
}

bool is_view_op(const std::string& op) {
  static const std::set<std::string> views = {
#define FG_VIEW(op) #op,
#define FG_MAY_ALIAS(op)
#include "views.def"
#undef FG_MAY_ALIAS
#undef FG_VIEW
  };
  return views.count(op) != 0;
}

bool may_alias_input(const std::string& op) {
  static const std::set<std::string> ops = {
#define FG_VIEW(op)
#define FG_MAY_ALIAS(op) #op,
#include "views.def"
#undef FG_MAY_ALIAS
#undef FG_VIEW
  };
  return ops.count(op) != 0;
}

}  // namespace funcgen
