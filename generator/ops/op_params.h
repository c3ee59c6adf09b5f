// The parameter lists of the op tables' rows (templates/*.def): "dim0 dim1",
// "offset=0 dim1=-2 dim2=-1", "weight={} reduction=fg::Reduction::Mean". One parser for both
// tables, so that a list means the same in FG_VMAP and in FG_PARAMS.
#pragma once

#include <string>
#include <vector>

namespace funcgen {

// One non-tensor parameter of an op, as a table lists it.
struct OpParam {
  std::string name;
  std::string default_value;  // "" when a call must give it
  bool is_dim = false;        // a dim index, which vmap shifts past the batch dims
};

// The parameters of a list, in order: words `name` or `name=default` separated by spaces; a default
// may hold spaces inside brackets ("dims={0, 1}").
std::vector<OpParam> parse_op_params(const std::string& list);

}  // namespace funcgen
