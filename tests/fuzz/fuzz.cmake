# The libFuzzer targets (FUNCGEN_FUZZ: the sanitized build, under Clang; ASan and UBSan are on).
# In the suite each runs for FUNCGEN_FUZZ_SECONDS with a fixed seed, from its seed corpus
# (corpus/<name>, or the directories named below) and its regressions (regressions/<name>: every
# input a fuzzer ever failed on). run_fuzzer.sh says how to run them for hours.
set(FUNCGEN_FUZZ_SECONDS 45 CACHE STRING "How long each fuzz target runs in the test suite")
set(FUNCGEN_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})

# funcgen_fuzzer(<name> SOURCES... LIBRARIES... [CORPUS dirs...] [OPTIONS libFuzzer flags...])
function(funcgen_fuzzer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES;CORPUS;OPTIONS" ${ARGN})
  add_executable(fuzz_${name} ${ARG_SOURCES})
  target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer -Wall -Wextra)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_${name} PRIVATE ${ARG_LIBRARIES})
  set(corpus ${FUNCGEN_FUZZ_DIR}/regressions/${name})
  if(EXISTS ${FUNCGEN_FUZZ_DIR}/corpus/${name})
    list(APPEND corpus ${FUNCGEN_FUZZ_DIR}/corpus/${name})
  endif()
  list(APPEND corpus ${ARG_CORPUS})
  set(dict)
  if(EXISTS ${FUNCGEN_FUZZ_DIR}/${name}.dict)
    set(dict -dict=${FUNCGEN_FUZZ_DIR}/${name}.dict)
  endif()
  add_test(NAME fuzz.${name}
           COMMAND ${FUNCGEN_FUZZ_DIR}/run_fuzzer.sh $<TARGET_FILE:fuzz_${name}> ${FUNCGEN_FUZZ_SECONDS}
                   ${CMAKE_CURRENT_BINARY_DIR}/fuzz/${name} ${corpus} -- -seed=1 ${dict} ${ARG_OPTIONS})
  funcgen_label_test(fuzz.${name} fuzz)
endfunction()

funcgen_fuzzer(spec SOURCES ${FUNCGEN_FUZZ_DIR}/fuzz_spec.cpp LIBRARIES funcgen_spec
               OPTIONS -max_len=512 -timeout=10)
# Without RTTI, as funcgen_spec: UBSan's vptr check would find its exceptions' type info missing.
target_compile_options(fuzz_spec PRIVATE -fno-rtti)
# Clang's own caches are kept until exit: leak checks are for the runtime's targets.
# Its seeds are ten small annotated sources (a run takes 1 to 3 s under ASan, and libFuzzer runs
# every seed before it mutates); run_fuzzer.sh's long run adds the mutation corpus.
funcgen_fuzzer(tool SOURCES ${FUNCGEN_FUZZ_DIR}/fuzz_tool.cpp LIBRARIES funcgen_tool
               OPTIONS -max_len=16384 -timeout=60 -rss_limit_mb=6144 -detect_leaks=0)
target_compile_definitions(fuzz_tool PRIVATE
  FUNCGEN_FUZZ_RUNTIME_INCLUDE="${PROJECT_SOURCE_DIR}/runtime/include")
funcgen_fuzzer(fused SOURCES ${FUNCGEN_FUZZ_DIR}/fuzz_fused.cpp LIBRARIES funcgen::runtime GTest::gtest
               OPTIONS -max_len=256 -timeout=10)
target_include_directories(fuzz_fused PRIVATE ${PROJECT_SOURCE_DIR}/tests/runtime)
funcgen_fuzzer(ops SOURCES ${FUNCGEN_FUZZ_DIR}/fuzz_ops.cpp LIBRARIES funcgen::runtime GTest::gtest
               OPTIONS -max_len=256 -timeout=10)
target_include_directories(fuzz_ops PRIVATE ${PROJECT_SOURCE_DIR}/tests/runtime)
