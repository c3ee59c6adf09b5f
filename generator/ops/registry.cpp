#include "ops/registry.h"

#include <deque>
#include <mutex>
#include <set>
#include <unordered_map>

#include "ir/ir.h"
#include "ops/derivative_rules.h"
#include "ops/inplace.h"

namespace funcgen::ops {

namespace {

// The ids: the rows' names first (an op's id is its first row), then the names met at run time.
struct Registry {
  std::unordered_map<std::string, OpId> ids;
  std::deque<std::string> names;  // by id (a deque: the references name_of returns stay valid)
  std::deque<OpInfo> infos;       // by id, each filled in the first time it is asked for
  std::deque<bool> filled;
  std::mutex mutex;               // (funcgen is single-threaded; the fuzz targets may not be)

  Registry() {
    for (uint32_t i = 0; i < detail::kRowCount; ++i) {
      const std::string name(detail::kOpNames[i]);
      ids.emplace(name, static_cast<OpId>(i));  // (emplace keeps the first row's)
      names.push_back(name);
      infos.emplace_back();
      filled.push_back(false);
    }
  }

  OpId intern(std::string_view name) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = ids.find(std::string(name));
    if (it != ids.end()) return it->second;
    const OpId id = static_cast<OpId>(names.size());
    ids.emplace(std::string(name), id);
    names.emplace_back(name);
    infos.emplace_back();
    filled.push_back(false);
    return id;
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

std::set<std::string> fused_names(bool unary) {
  std::set<std::string> out;
#define FG_FUSED_UNARY(op, kind) \
  if (unary) out.insert(#op);
#define FG_FUSED_BINARY(op, kind) \
  if (!unary) out.insert(#op);
#include "fused.def"
#undef FG_FUSED_BINARY
#undef FG_FUSED_UNARY
  return out;
}

// The facts of one op, read from the tables of ops/ (each reads its .def file).
OpInfo make_info(OpId id, const std::string& name) {
  static const std::set<std::string> unary = fused_names(true), binary = fused_names(false);
  OpInfo i;
  i.id = id;
  i.name = name;
  i.listed = static_cast<uint32_t>(id) < detail::kRowCount;
  i.batching = find_rule(name);
  i.derivative = ad::find_rule(name);
  i.view = is_view_op(name);
  i.may_alias = may_alias_input(name);
  i.writes_arguments = funcgen::writes_arguments(name);
  i.fused_unary = unary.count(name) != 0;
  i.fused_binary = binary.count(name) != 0;
  i.broadcasts = i.derivative != nullptr && i.derivative->broadcasts;
  i.constant = i.derivative != nullptr && i.derivative->constant;
  if (i.batching.rule == BatchRule::Out) i.out_functional = name.substr(0, name.size() - 4);  // "_out"
  return i;
}

}  // namespace

OpId detail::no_row_names_this_op() { return OpId::Unknown; }

OpId id_of(std::string_view name) { return name.empty() ? OpId::Unknown : registry().intern(name); }

OpId id(const ir::Expr& e) { return id_of(e.op); }

const std::string& name_of(OpId id) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.names.at(static_cast<uint32_t>(id));
}

const OpInfo& info(OpId id) {
  Registry& r = registry();
  const uint32_t k = static_cast<uint32_t>(id);
  std::string name;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.filled.at(k)) return r.infos[k];
    name = r.names[k];
  }
  OpInfo made = make_info(id, name);  // (outside the lock: the tables may intern names)
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.filled[k]) {
    r.infos[k] = std::move(made);
    r.filled[k] = true;
  }
  return r.infos[k];
}

const OpInfo& info(const ir::Expr& e) { return info(id(e)); }

}  // namespace funcgen::ops
