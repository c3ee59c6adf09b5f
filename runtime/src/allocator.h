// CPU memory for tensor storage.
#pragma once

#include <cstddef>
#include <memory>

namespace fg::detail {

// A 64-byte aligned block of at least `nbytes`, freed (or cached for reuse) when the last
// owner lets go; nullptr when memory is exhausted.
std::shared_ptr<void> allocate_cpu(size_t nbytes);

}  // namespace fg::detail
