// fg::Error: every runtime failure (shape, dtype, device or index mismatch) is reported by
// throwing this, with a message `fg::<op>: <what>` that names the shapes involved.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace fg {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

namespace detail {
// Builds `fg::<op>: <parts...>` from streamable parts and throws it.
template <typename... Parts>
[[noreturn]] void fail(const char* op, Parts&&... parts) {
  std::ostringstream os;
  os << "fg::" << op << ": ";
  (os << ... << std::forward<Parts>(parts));
  throw Error(os.str());
}
}  // namespace detail

}  // namespace fg
