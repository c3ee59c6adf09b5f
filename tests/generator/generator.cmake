# Unit tests of the generator's parts that need no Clang.
add_executable(test_spec ${CMAKE_CURRENT_LIST_DIR}/test_spec.cpp)
target_link_libraries(test_spec PRIVATE funcgen_spec GTest::gtest GTest::gtest_main)
gtest_discover_tests(test_spec PROPERTIES LABELS generator)

# The tool's diagnostics, checked with FileCheck against the inputs' CHECK lines.
find_program(FUNCGEN_FILECHECK NAMES FileCheck-16 FileCheck HINTS /usr/lib/llvm-16/bin REQUIRED)
file(GLOB FUNCGEN_TOOL_TESTS ${CMAKE_CURRENT_LIST_DIR}/tool/*.cpp)
foreach(input IN LISTS FUNCGEN_TOOL_TESTS)
  get_filename_component(name ${input} NAME_WE)
  add_test(NAME funcgen.${name}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/tool/run_check.sh $<TARGET_FILE:funcgen> ${FUNCGEN_FILECHECK}
                   ${input} ${PROJECT_SOURCE_DIR}/runtime/include)
  set_tests_properties(funcgen.${name} PROPERTIES LABELS generator)
endforeach()
