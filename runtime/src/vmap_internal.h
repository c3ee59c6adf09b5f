// Helpers shared by the files of fg::vmap's batching rules (vmap.cpp, vmap_conv.cpp, vmap_layers.cpp); not part of
// the public API.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "funcgen/runtime/vmap.h"
#include "internal.h"

namespace fg::vmap::detail {

// Throws "fg::vmap: <fn>: <parts...>".
template <typename... Parts>
[[noreturn]] void vfail(const char* fn, Parts&&... parts) {
  fg::detail::fail("vmap", fn, ": ", std::forward<Parts>(parts)...);
}

std::string levels_str(Levels levels);
// A batched operand must be defined and have at least one dim per level.
void check_operand(const Batched& b, const char* fn, const char* arg);
// The logical rank and shape of a batched operand.
int64_t lrank(const Batched& b);
IntArrayRef lshape(const Batched& b);
// "a of logical shape [3, 4] (batched at levels {0}), b ... (unbatched)": a rule's error context.
std::string describe(std::initializer_list<std::pair<const char*, const Batched*>> ops);
// The batch size of every level of `all` (in level order), taken from the operands that have it;
// throws naming fn when two operands disagree.
std::vector<int64_t> level_sizes(const Batched* ops, size_t n, Levels all, const char* fn);
std::vector<int64_t> level_sizes(const std::vector<Batched>& ops, Levels all, const char* fn);

// a + b and a * b with the operands aligned (a bias, a weight), batched at both levels.
Batched add_aligned(const Batched& a, const Batched& b, const char* fn);
Batched mul_aligned(const Batched& a, const Batched& b, const char* fn);
// Sums (or averages) x over its logical dims (x batched with nb dims); a logical scalar stays.
Tensor reduce_logical(const Tensor& x, int64_t nb, Reduction reduction);

// Runs f; an fg::Error from an underlying op is rethrown as "fg::vmap: <fn>: <context>: <error>"
// (errors that already come from a vmap rule pass unchanged).
template <typename F, typename Ctx>
auto with_context(const char* fn, Ctx&& ctx, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    const std::string msg = e.what();
    if (msg.rfind("fg::vmap: ", 0) == 0) throw;
    vfail(fn, ctx(), ": ", msg);
  }
}

}  // namespace fg::vmap::detail
