// Which SIMD instruction set the CPU kernels run on. The kernels are compiled once per ISA
// (Google Highway) and the best one the CPU supports is chosen at run time; tests and benchmarks
// can force a lower one to compare the variants.
#pragma once

#include <string>
#include <vector>

namespace fg::cpu {

// Names of the ISA levels this binary has kernels for and this CPU runs, best first,
// e.g. {"AVX3", "AVX2", "SSE4", "SSSE3", "SCALAR"}.
std::vector<std::string> available_isas();
// The ISA the kernels currently dispatch to.
std::string current_isa();
// Restricts dispatch to `isa` (one of available_isas()); an empty string restores the default.
// Throws fg::Error for an ISA this machine cannot run.
void force_isa(const std::string& isa);

}  // namespace fg::cpu
