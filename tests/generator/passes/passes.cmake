# Pass-level unit tests (issue 42): each pass of the generator on small inputs, compared with the
# text the test expects (the IR as ir::dump prints it, or the C++ the printer makes). They link
# funcgen_core, the passes as a library; those that lower C++ link the front end too, funcgen_tool. Built with -fno-rtti, as the
# library (its PUBLIC options): see funcgen_spec's comment on UBSan's vptr check.
function(funcgen_pass_test name)
  cmake_parse_arguments(ARG "FRONTEND" "" "" ${ARGN})
  add_executable(test_${name} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/test_${name}.cpp)
  target_include_directories(test_${name} PRIVATE ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  target_link_libraries(test_${name} PRIVATE funcgen_core GTest::gtest GTest::gtest_main)
  if(ARG_FRONTEND)
    target_link_libraries(test_${name} PRIVATE funcgen_tool)
  endif()
  target_compile_definitions(test_${name} PRIVATE
    FUNCGEN_RUNTIME_INCLUDE="${PROJECT_SOURCE_DIR}/runtime/include"
    FUNCGEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  funcgen_discover(test_${name} generator TEST_PREFIX passes.)
endfunction()

funcgen_pass_test(registry)
funcgen_pass_test(lowering FRONTEND)
funcgen_pass_test(simplify)
funcgen_pass_test(fuse)
funcgen_pass_test(printer)

funcgen_pass_test(functionalize)
