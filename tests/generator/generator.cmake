# Unit tests of the generator's parts that need no Clang.
add_executable(test_spec ${CMAKE_CURRENT_LIST_DIR}/test_spec.cpp)
target_link_libraries(test_spec PRIVATE funcgen_spec GTest::gtest GTest::gtest_main)
gtest_discover_tests(test_spec PROPERTIES LABELS generator)
