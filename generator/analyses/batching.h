// Which values of a function are batched, at which vmap levels, for given batched parameters.
// Levels are a bit mask (bit i: batched at vmap level i, level 0 the outermost). A scalar with
// levels != 0 was computed from batched tensor values (by .item(), a comparison, ...): control
// flow on it is data-dependent.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <vector>

#include "analyses/levels.h"
#include "ir/ir.h"
#include "ir/module.h"

namespace funcgen {

using Levels = uint32_t;

struct VmapLevels {
  Levels all = 0;        // every level of the transform
  Levels different = 0;  // levels with randomness='different'
  Levels same = 0;       // levels with randomness='same'
  bool select = false;   // control_flow='select': branches on batched values become fg::where
};

class BatchingAnalysis {
 public:
  // `active`: the functions being analysed up the call chain (recursion is not transformable).
  // `module` holds the helpers fn calls (pipeline/callees.h).
  BatchingAnalysis(const ir::Function& fn, std::vector<Levels> param_levels, VmapLevels vmap, const ir::Module& module,
                   ir::CallChain* active = nullptr);

  Levels of(const ir::Expr& e) const;
  Levels var(int id) const { return vars_[static_cast<size_t>(id)]; }
  // Levels of each returned tensor (the elements of a returned tuple).
  const std::vector<Levels>& outputs() const { return outputs_; }
  const ir::Function& function() const { return fn_; }
  const VmapLevels& vmap() const { return vmap_; }

  // The analysis of a user function called at `call`, with its arguments' levels.
  const BatchingAnalysis* callee(const ir::Expr& call) const;
  // Whether the function recursed into itself (reported by the caller as unsupported).
  bool recursive() const { return recursive_; }
  // The call that closes the cycle (in this function or a helper), where it is reported.
  const ir::Expr* recursive_call() const { return recursive_call_; }

 private:
  Levels eval(const ir::Expr& e);
  void walk(const std::vector<ir::StmtPtr>& body, Levels control);
  void assign(int var, Levels l);

  const ir::Function& fn_;
  VmapLevels vmap_;
  const ir::Module& module_;
  std::vector<Levels> vars_;
  std::map<const ir::Expr*, Levels> exprs_;
  std::vector<Levels> outputs_;
  std::map<const ir::Expr*, std::unique_ptr<BatchingAnalysis>> callees_;
  bool changed_ = false;
  bool recursive_ = false;
  const ir::Expr* recursive_call_ = nullptr;
  ir::CallChain own_active_;
  ir::CallChain* active_ = nullptr;
};

// The batch masks of `levels` (bit k: level k): of the whole transform, and of each parameter
// (added to `params`, one per parameter of the function the levels batch).
VmapLevels vmap_masks(const std::vector<VmapLevel>& levels, std::vector<Levels>& params);

// Popcount of a level mask: how many batch dims a value has in front.
inline int nbatch(Levels l) { return __builtin_popcount(l); }

}  // namespace funcgen
