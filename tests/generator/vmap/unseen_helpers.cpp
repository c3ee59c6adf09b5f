// Functions test_vmap calls that funcgen does not read (no FUNCGEN, another translation unit).
#include "vmap_functions.h"

namespace vt {

namespace {
int64_t records = 0;
}  // namespace

// A reduction over the first dim: called on a whole batch instead of one example, it would sum
// over the batch.
std::tuple<fg::Tensor, fg::Tensor> unseen_split(const fg::Tensor& x) { return {x.sum(0), x * 2}; }

void unseen_record(const fg::Tensor&) { ++records; }
int64_t unseen_records() { return records; }

}  // namespace vt
