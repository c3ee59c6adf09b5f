#include "analyses/levels.h"

namespace funcgen {

VmapLevel make_level(const spec::Transform& transform, const SpecLocations* where, const ir::Function& fn) {
  const spec::Transform* t = &transform;
  VmapLevel level;
  level.transform = t;
  level.where = where;
  level.randomness = t->randomness;
  level.chunk_size = t->chunk_size;
  level.control_flow = t->control_flow;
  const size_t nparams = fn.params.size();
  for (size_t i = 0; i < nparams; ++i) {
    spec::Dim d = !t->in_dims.per_item ? t->in_dims.dims[0] : i < t->in_dims.dims.size() ? t->in_dims.dims[i] : std::nullopt;
    const ir::Type type = fn.var(fn.params[i]).type;
    if (type != ir::Type::Tensor && type != ir::Type::TensorList) d = std::nullopt;  // a list: each element
    level.in_dims.push_back(d);
  }
  for (size_t j = 0; j < fn.outputs; ++j)
    level.out_dims.push_back(!t->out_dims.per_item ? t->out_dims.dims[0]
                             : j < t->out_dims.dims.size() ? t->out_dims.dims[j]
                                                           : spec::Dim(0));
  return level;
}

clang::SourceLocation out_dims_location(const VmapLevel& level, size_t output) {
  const auto& od = level.transform->out_dims;
  const size_t offset = od.per_item && output < od.item_offsets.size() ? od.item_offsets[output]
                        : od.offset != 0                               ? od.offset
                                                                       : level.transform->offset;
  return level.where->at(offset);
}

std::string batched_out_dims_none(size_t output, const std::string& fn) {
  return "out_dims is None for output " + std::to_string(output) + ", but '" + fn +
         "' returns it batched at this vmap level; give it an out_dim or return a value that does not depend on "
         "the mapped inputs";
}

}  // namespace funcgen
