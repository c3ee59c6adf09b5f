# Matrix products and einsum (runtime/src/linalg.cpp, runtime/src/einsum.cpp).
# Included from tests/CMakeLists.txt, after find_package(GTest) and include(GoogleTest).
add_executable(test_linalg ${CMAKE_CURRENT_LIST_DIR}/test_linalg.cpp)
# runtime/src for cpu/gemm.h: the float32 gemm kernel is also tested directly, on every ISA.
target_include_directories(test_linalg PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../../runtime/src)
find_package(OpenMP REQUIRED)
target_link_libraries(test_linalg PRIVATE funcgen::runtime GTest::gtest GTest::gtest_main OpenMP::OpenMP_CXX)
target_compile_options(test_linalg PRIVATE -Wall -Wextra $<$<CXX_COMPILER_ID:GNU>:-Wno-init-list-lifetime>)
funcgen_discover(test_linalg runtime DISCOVERY_TIMEOUT 60)
