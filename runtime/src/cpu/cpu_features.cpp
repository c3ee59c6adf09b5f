#include "funcgen/runtime/cpu_features.h"

#include <hwy/highway.h>
#include <hwy/targets.h>

#include "funcgen/runtime/error.h"

namespace fg::cpu {

std::vector<std::string> available_isas() {
  std::vector<std::string> names;
  // Targets are bits, lower bit = better ISA on x86; SupportedAndGeneratedTargets lists them so.
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) names.emplace_back(hwy::TargetName(target));
  return names;
}

std::string current_isa() {
  const auto targets = hwy::SupportedAndGeneratedTargets();
  return targets.empty() ? std::string("none") : std::string(hwy::TargetName(targets.front()));
}

void force_isa(const std::string& isa) {
  if (isa.empty()) {
    hwy::SetSupportedTargetsForTest(0);
    return;
  }
  hwy::SetSupportedTargetsForTest(0);
  std::string known;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    if (isa == hwy::TargetName(target)) {
      hwy::SetSupportedTargetsForTest(target);
      return;
    }
    known += (known.empty() ? "" : ", ") + std::string(hwy::TargetName(target));
  }
  detail::fail("cpu::force_isa", "ISA '", isa, "' is not available on this machine (available: ", known, ")");
}

}  // namespace fg::cpu
