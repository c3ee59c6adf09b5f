// cuda/shared_library.h on the CPU: a library opened at first use by the first candidate that
// opens, its functions found by name, and fg::Errors that say what was tried when either fails.
#include <gtest/gtest.h>

#include <string>

#include "cuda/shared_library.h"
#include "device_test.h"

namespace {

using fg::cuda::detail::SharedLibrary;

using fg::testing::error_of;

TEST(SharedLibrary, OpensTheFirstCandidateThatOpensAndFindsItsFunctions) {
  const SharedLibrary m("matmul", "libm", {"libfuncgen-no-such-library.so.1", "libm.so.6"});
  EXPECT_EQ(m.path(), "libm.so.6");
  const auto cosine = m.function<double (*)(double)>("cos");
  EXPECT_EQ(cosine(0.0), 1.0);
}

TEST(SharedLibrary, SaysWhatItTriedWhenNoCandidateOpens) {
  EXPECT_EQ(error_of([] { SharedLibrary("matmul", "cuBLAS", {"libfuncgen-no-such-library.so.1"}); }),
            "fg::matmul: cuBLAS could not be loaded (libfuncgen-no-such-library.so.1: cannot open shared object "
            "file: No such file or directory); put its directory on LD_LIBRARY_PATH");
  EXPECT_EQ(error_of([] { SharedLibrary("matmul", "cuBLAS", {}); }),
            "fg::matmul: cuBLAS could not be loaded (no candidate); put its directory on LD_LIBRARY_PATH");
}

TEST(SharedLibrary, NamesAFunctionTheLibraryLacks) {
  const SharedLibrary m("matmul", "libm", {"libm.so.6"});
  EXPECT_EQ(error_of([&] { m.symbol("fg_no_such_function"); }),
            "fg::matmul: libm (libm.so.6) has no function fg_no_such_function: another version than the one "
            "built against?");
}

}  // namespace
