#include "ir/module.h"

namespace funcgen::ir {

Module::Key Module::key(const clang::FunctionDecl* callee, const std::vector<std::string>& absent) {
  return {callee->getDefinition() != nullptr ? callee->getDefinition() : callee, absent};
}

const Function* Module::find(const clang::FunctionDecl* callee, const std::vector<std::string>& absent) const {
  auto it = functions_.find(key(callee, absent));
  return it == functions_.end() ? nullptr : it->second;
}

bool Module::contains(const clang::FunctionDecl* callee, const std::vector<std::string>& absent) const {
  return functions_.count(key(callee, absent)) != 0;
}

void Module::add(const clang::FunctionDecl* callee, const std::vector<std::string>& absent, const Function* fn) {
  functions_[key(callee, absent)] = fn;
}

}  // namespace funcgen::ir
