# Unit tests of the generator's parts that need no Clang.
add_executable(test_spec ${CMAKE_CURRENT_LIST_DIR}/test_spec.cpp)
target_link_libraries(test_spec PRIVATE funcgen_spec GTest::gtest GTest::gtest_main)
# Without RTTI, as funcgen_spec: shared_ptrs that the library makes are destroyed here, and with
# RTTI here UBSan's vptr check finds no type info in the library's control-block vtables (GoogleTest's
# headers need no RTTI).
target_compile_options(test_spec PRIVATE -fno-rtti)
funcgen_discover(test_spec generator)

# Pass-level tests of the generator's library (funcgen_core): lowering, registry, simplify, fuse,
# printer and AD's functionalization on small inputs.
include(${CMAKE_CURRENT_LIST_DIR}/passes/passes.cmake)

# The tool's diagnostics, checked with FileCheck against the inputs' CHECK lines.
find_program(FUNCGEN_FILECHECK NAMES FileCheck-16 FileCheck HINTS /usr/lib/llvm-16/bin REQUIRED)
# The limitations gallery (samples/limitations) carries its expected diagnostics the same way.
file(GLOB FUNCGEN_TOOL_TESTS ${CMAKE_CURRENT_LIST_DIR}/tool/*.cpp ${PROJECT_SOURCE_DIR}/samples/limitations/*.cpp)
list(FILTER FUNCGEN_TOOL_TESTS EXCLUDE REGEX "limitations/main\\.cpp$")  # the gallery's runner, no specs
foreach(input IN LISTS FUNCGEN_TOOL_TESTS)
  get_filename_component(name ${input} NAME_WE)
  get_filename_component(dir ${input} DIRECTORY)
  get_filename_component(dir ${dir} NAME)
  if(dir STREQUAL "limitations")
    set(name limitations.${name})
  endif()
  add_test(NAME funcgen.${name}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/tool/run_check.sh $<TARGET_FILE:funcgen> ${FUNCGEN_FILECHECK}
                   ${input} ${PROJECT_SOURCE_DIR}/runtime/include)
  funcgen_label_test(funcgen.${name} generator DEPENDS funcgen)
endforeach()

# The test targets that compile generated code: its files are large (the op database's 140,000
# lines) and the tests time nothing, so they compile at -O0 in both builds: GCC takes 11 s for
# control_flow's 39,000 lines at -O0, 36 s at -Og and 77 s at -O1, while the tests run as fast (the
# work is in the runtime library, which keeps the build type's level; bench/ times the generated
# code at -O3). The generated code that users compile optimized is compiled so by bench/ and samples/.
function(funcgen_generated_test target)
  target_compile_options(${target} PRIVATE -O0)
endfunction()

# vmap correctness: the functions of vmap/vmap_functions.cpp batched by funcgen, each compared with
# a loop of calls of the original function over the batch.
add_executable(test_vmap ${CMAKE_CURRENT_LIST_DIR}/vmap/test_vmap.cpp ${CMAKE_CURRENT_LIST_DIR}/vmap/unseen_helpers.cpp)
target_include_directories(test_vmap PRIVATE ${CMAKE_CURRENT_LIST_DIR}/vmap)
target_link_libraries(test_vmap PRIVATE GTest::gtest GTest::gtest_main)
# The generated code compiles without warnings.
target_compile_options(test_vmap PRIVATE -Wall -Wextra $<$<CXX_COMPILER_ID:GNU>:-Wno-init-list-lifetime>)
funcgen_generate(test_vmap SOURCES ${CMAKE_CURRENT_LIST_DIR}/vmap/vmap_functions.cpp)
funcgen_generated_test(test_vmap)
funcgen_discover(test_vmap generator DISCOVERY_TIMEOUT 60)

# The limitations gallery's fixed versions, generated at build time and checked for numbers.
add_executable(test_limitations_fixed ${CMAKE_CURRENT_LIST_DIR}/limitations/test_fixed.cpp)
funcgen_generate(test_limitations_fixed SOURCES ${PROJECT_SOURCE_DIR}/samples/limitations/fixed.cpp)
funcgen_generated_test(test_limitations_fixed)
target_link_libraries(test_limitations_fixed PRIVATE GTest::gtest GTest::gtest_main)
funcgen_discover(test_limitations_fixed generator)

# Op names are compared only in generator/ops/: the rest asks ops/registry.h (issue 42).
add_test(NAME funcgen.op_names_only_in_ops
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ops/op_names_only_in_ops.sh ${PROJECT_SOURCE_DIR})
funcgen_label_test(funcgen.op_names_only_in_ops generator)
# No generator source over 1,500 lines, no class over 800 with its members (issue 42).
add_test(NAME funcgen.source_sizes
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/hygiene/source_sizes.sh ${PROJECT_SOURCE_DIR})
funcgen_label_test(funcgen.source_sizes generator)

# --fix and --export-fixes on the gallery.
add_test(NAME funcgen.fixes
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/fixes/run_fixes.sh $<TARGET_FILE:funcgen>
                 ${PROJECT_SOURCE_DIR}/samples/limitations ${PROJECT_SOURCE_DIR}/runtime/include)
funcgen_label_test(funcgen.fixes generator DEPENDS funcgen)

# Output files, depfile, atomic writes, exit statuses; the compiler checks that the generated source
# finds the annotated one.
add_test(NAME funcgen.output
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/output/run_output.sh $<TARGET_FILE:funcgen>
                 ${PROJECT_SOURCE_DIR}/samples/limitations ${PROJECT_SOURCE_DIR}/runtime/include
                 ${CMAKE_CXX_COMPILER})
funcgen_label_test(funcgen.output generator DEPENDS funcgen)

# Two funcgen processes on one output directory (parallel builds), and runs killed at random
# moments: outputs are one run's, whole. Not sanitized: it tests the file protocol, and takes long
# under ASan.
if(NOT FUNCGEN_SANITIZE)
  add_test(NAME funcgen.concurrent_outputs
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/output/run_concurrent.sh $<TARGET_FILE:funcgen>
                   ${PROJECT_SOURCE_DIR}/samples/limitations ${PROJECT_SOURCE_DIR}/runtime/include)
  funcgen_label_test(funcgen.concurrent_outputs generator DEPENDS funcgen)
endif()

# What the optimizations leave in generated code (common subexpressions, structured bases).
add_test(NAME funcgen.optimized
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/output/run_optimized.sh $<TARGET_FILE:funcgen>
                 ${PROJECT_SOURCE_DIR}/runtime/include)
funcgen_label_test(funcgen.optimized generator DEPENDS funcgen)

# --format=json and --sarif: the JSON against the inputs' CHECK lines, the SARIF against what the
# SARIF 2.1.0 schema requires and against funcgen's checks (Debian: nlohmann-json3-dev).
find_package(nlohmann_json 3 REQUIRED)
add_executable(test_formats ${CMAKE_CURRENT_LIST_DIR}/formats/test_formats.cpp)
target_link_libraries(test_formats PRIVATE GTest::gtest GTest::gtest_main nlohmann_json::nlohmann_json)
target_compile_definitions(test_formats PRIVATE FUNCGEN_EXE="$<TARGET_FILE:funcgen>"
                                                FUNCGEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_compile_options(test_formats PRIVATE -Wall -Wextra)
add_dependencies(test_formats funcgen)  # the tests run it
funcgen_discover(test_formats generator TEST_PREFIX funcgen.formats.)

# grad / grad_and_value against central finite differences in float64.
add_executable(test_ad ${CMAKE_CURRENT_LIST_DIR}/ad/test_ad.cpp)
target_include_directories(test_ad PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ad)
target_link_libraries(test_ad PRIVATE GTest::gtest GTest::gtest_main)
funcgen_generate(test_ad SOURCES ${CMAKE_CURRENT_LIST_DIR}/ad/ad_functions.cpp)
funcgen_generated_test(test_ad)
funcgen_discover(test_ad generator)

# The workloads of torch.func's tutorials against the values torch.func computed
# (tests/golden/make_golden.py; the stored JSON means the suite needs no Python).
add_executable(test_golden ${CMAKE_CURRENT_LIST_DIR}/ad/test_golden.cpp)
target_include_directories(test_golden PRIVATE ${CMAKE_CURRENT_LIST_DIR}/ad)
target_link_libraries(test_golden PRIVATE GTest::gtest GTest::gtest_main nlohmann_json::nlohmann_json)
target_compile_definitions(test_golden PRIVATE FUNCGEN_GOLDEN_JSON="${PROJECT_SOURCE_DIR}/tests/golden/torch_func_golden.json")
funcgen_generate(test_golden SOURCES ${CMAKE_CURRENT_LIST_DIR}/ad/golden_functions.cpp)
funcgen_generated_test(test_golden)
funcgen_discover(test_golden generator TEST_PREFIX golden.)

# The op database: every differentiable op through jvp, vjp, jacrev/jacfwd, vmap(jvp), the batched
# vjp and hessian, against finite differences in float64 and against each other.
# An AD test: ad/test_<name>.cpp against the code funcgen generates from ad/<name>_functions.cpp.
function(funcgen_ad_test name)
  add_executable(test_${name} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ad/test_${name}.cpp)
  target_include_directories(test_${name} PRIVATE ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ad)
  target_link_libraries(test_${name} PRIVATE GTest::gtest GTest::gtest_main)
  funcgen_generate(test_${name} SOURCES ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/ad/${name}_functions.cpp)
  funcgen_generated_test(test_${name})
  funcgen_discover(test_${name} generator TEST_PREFIX ad.)
endfunction()
# Outputs that are one tensor more than once (issue 42): each gets the sum of its cotangents.
funcgen_ad_test(aliased_outputs)
# Assignment into views (`y[i] = v`), lowered as the in-place copy_ it is, through every transform.
funcgen_ad_test(view_assign)
# The heaviest translation unit by far; the sanitized build leaves it out (the normal build runs it).
if(NOT FUNCGEN_SANITIZE)
  funcgen_ad_test(opdb)
  # The same database generated with --no-optimize (no structured bases, no common subexpressions
  # or dead code), in its own namespace, so that test_opdb checks the optimized code against the
  # code as the transforms derive it, entry by entry.
  set(unoptimized ${CMAKE_CURRENT_BINARY_DIR}/funcgen_test_opdb_unoptimized)
  funcgen_generate(test_opdb SOURCES ${CMAKE_CURRENT_LIST_DIR}/ad/opdb_functions.cpp OUTPUT_DIR ${unoptimized}
                   OPTIONS --no-optimize)
  set_source_files_properties(${unoptimized}/opdb_functions.funcgen.cpp TARGET_DIRECTORY test_opdb
                              PROPERTIES COMPILE_DEFINITIONS opdb=opdb_unoptimized)
  target_compile_definitions(test_opdb PRIVATE
                             FUNCGEN_UNOPTIMIZED_HEADER="${unoptimized}/opdb_functions.funcgen.h")
endif()
# AD through branches, switches and loops with run-time trip counts, against finite differences.
funcgen_ad_test(control_flow)
# User-given derivative rules (custom_vjp / custom_jvp).
funcgen_ad_test(custom_rules)
# Transforms nested in each other, and vmap inside derivatives.
funcgen_ad_test(nesting)

# The mutation corpus (issue 14): each case in mutation/cases is either reported at its construct
# or generated, compiled and checked against the loop over examples / finite differences.
# mutation_runner holds the runtime (linked whole, its symbols exported) and loads the cases that
# run_mutation.sh compiles into a shared object, so the script needs no link line of its own.
add_executable(mutation_runner ${CMAKE_CURRENT_LIST_DIR}/mutation/mutation_runner.cpp)
target_link_libraries(mutation_runner PRIVATE -Wl,--whole-archive $<TARGET_FILE:funcgen_runtime> -Wl,--no-whole-archive
                                              funcgen_runtime ${CMAKE_DL_LIBS})
set_target_properties(mutation_runner PROPERTIES ENABLE_EXPORTS ON)
add_test(NAME funcgen.mutation
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/mutation/run_mutation.sh $<TARGET_FILE:funcgen> ${CMAKE_CXX_COMPILER}
                 ${PROJECT_SOURCE_DIR}/runtime/include $<TARGET_FILE:mutation_runner>
                 ${CMAKE_CURRENT_LIST_DIR}/mutation/cases)
set_tests_properties(funcgen.mutation PROPERTIES TIMEOUT 600)
funcgen_label_test(funcgen.mutation generator)

# Structured parameters and results (torch.func's pytrees): the tutorials' ports with parameters in
# structs and maps, against torch.func's values and finite differences.
add_executable(test_structures ${CMAKE_CURRENT_LIST_DIR}/structures/test_structures.cpp)
target_include_directories(test_structures PRIVATE ${CMAKE_CURRENT_LIST_DIR}/structures ${CMAKE_CURRENT_LIST_DIR}/ad)
target_link_libraries(test_structures PRIVATE GTest::gtest GTest::gtest_main nlohmann_json::nlohmann_json)
target_compile_definitions(test_structures PRIVATE FUNCGEN_GOLDEN_JSON="${PROJECT_SOURCE_DIR}/tests/golden/torch_func_golden.json")
target_compile_options(test_structures PRIVATE -Wall -Wextra)
funcgen_generate(test_structures SOURCES ${CMAKE_CURRENT_LIST_DIR}/structures/structures_functions.cpp)
funcgen_generated_test(test_structures)
funcgen_discover(test_structures generator)

# The constructs users write (jumps out of loops, ...), each through every transform against finite
# differences in float64 and the loop of unbatched calls. Its 182,000 generated lines are the
# largest translation unit (and 7 minutes of funcgen under the sanitizers): the sanitized build
# leaves it out, as it does test_opdb; the normal build runs it.
if(NOT FUNCGEN_SANITIZE)
  add_executable(test_constructs ${CMAKE_CURRENT_LIST_DIR}/constructs/test_constructs.cpp)
  target_link_libraries(test_constructs PRIVATE GTest::gtest GTest::gtest_main)
  target_compile_options(test_constructs PRIVATE -Wall -Wextra)
  funcgen_generate(test_constructs SOURCES ${CMAKE_CURRENT_LIST_DIR}/constructs/constructs_functions.cpp
                                          ${CMAKE_CURRENT_LIST_DIR}/constructs/constructs_containers.cpp
                                          ${CMAKE_CURRENT_LIST_DIR}/constructs/constructs_pointers.cpp
                                          ${CMAKE_CURRENT_LIST_DIR}/constructs/constructs_objects.cpp
                                          ${CMAKE_CURRENT_LIST_DIR}/constructs/constructs_recursion.cpp)
  funcgen_generated_test(test_constructs)
  funcgen_discover(test_constructs generator)
endif()
add_executable(test_list_parameters ${CMAKE_CURRENT_LIST_DIR}/constructs/test_list_parameters.cpp)
target_link_libraries(test_list_parameters PRIVATE GTest::gtest GTest::gtest_main)
target_compile_options(test_list_parameters PRIVATE -Wall -Wextra)
funcgen_generate(test_list_parameters SOURCES ${CMAKE_CURRENT_LIST_DIR}/constructs/list_parameters.cpp)
funcgen_generated_test(test_list_parameters)
funcgen_discover(test_list_parameters generator)

# Users' names of every form next to generated ones (`_`, `_x`, `x_`, d_x, batch0): the generated
# code compiles and computes what the same functions with plain names compute.
add_executable(test_hygiene ${CMAKE_CURRENT_LIST_DIR}/hygiene/test_hygiene.cpp)
target_include_directories(test_hygiene PRIVATE ${CMAKE_CURRENT_LIST_DIR}/hygiene)
target_link_libraries(test_hygiene PRIVATE GTest::gtest GTest::gtest_main)
target_compile_options(test_hygiene PRIVATE -Wall -Wextra)
funcgen_generate(test_hygiene SOURCES ${CMAKE_CURRENT_LIST_DIR}/hygiene/hygiene_functions.cpp)
funcgen_generated_test(test_hygiene)
funcgen_discover(test_hygiene generator)

# A structure of 1000 tensors through the transforms: aggregates of any size compile.
add_executable(test_large_structures ${CMAKE_CURRENT_LIST_DIR}/structures/test_large_structures.cpp)
target_include_directories(test_large_structures PRIVATE ${CMAKE_CURRENT_LIST_DIR}/structures)
target_link_libraries(test_large_structures PRIVATE GTest::gtest GTest::gtest_main)
funcgen_generate(test_large_structures SOURCES ${CMAKE_CURRENT_LIST_DIR}/structures/large_functions.cpp)
funcgen_generated_test(test_large_structures)
funcgen_discover(test_large_structures generator)
