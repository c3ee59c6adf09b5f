#include "ir/module.h"

namespace funcgen::ir {

Module::Key Module::key(const clang::FunctionDecl* callee, const std::vector<std::string>& absent,
                        const Constants& constants) {
  return {callee->getDefinition() != nullptr ? callee->getDefinition() : callee, absent, constants};
}

const Function* Module::find(const clang::FunctionDecl* callee, const std::vector<std::string>& absent,
                             const Constants& constants) const {
  auto it = functions_.find(key(callee, absent, constants));
  return it == functions_.end() ? nullptr : it->second;
}

bool Module::contains(const clang::FunctionDecl* callee, const std::vector<std::string>& absent,
                      const Constants& constants) const {
  return functions_.count(key(callee, absent, constants)) != 0;
}

void Module::add(const clang::FunctionDecl* callee, const std::vector<std::string>& absent, const Function* fn,
                 const Constants& constants) {
  functions_[key(callee, absent, constants)] = fn;
}

size_t Module::levels(const clang::FunctionDecl* callee) const {
  const clang::FunctionDecl* fn = callee->getDefinition() != nullptr ? callee->getDefinition() : callee;
  size_t n = 0;
  for (const auto& [key, f] : functions_) n += std::get<0>(key) == fn && !std::get<2>(key).empty() ? 1 : 0;
  return n;
}

bool CallChain::reenters(const Expr& call) const {
  const clang::FunctionDecl* fn = definition(call.callee);
  for (const auto& frame : frames_)
    if (frame.first == fn) return true;
  return false;
}

bool CallChain::endless(const Expr& call) const {
  if (!reenters(call)) return false;
  if (call.constants.empty()) return true;
  const clang::FunctionDecl* fn = definition(call.callee);
  for (const auto& [f, constants] : frames_)
    if (f == fn && constants == call.constants) return true;
  return false;
}

bool CallChain::recursive(const Expr& call, const Module& module) const {
  return endless(call) || (reenters(call) && !module.contains(call));
}

std::string recursion_advice(const std::string& done) {
  return "recursion is " + done + " only where its depth is a compile-time constant at each call (a literal, or "
         "a parameter that is one, minus a literal: f(x, n - 1)), at most " +
         std::to_string(CallChain::kMaxUnfolding) + " levels deep; write it as a loop otherwise";
}

}  // namespace funcgen::ir
