# funcgen_generate(<target> SOURCES <files>... [OUTPUT_DIR <dir>] [SARIF <file>] [OPTIONS <args>...])
#
# OPTIONS go to the tool: --checks=..., --warnings-as-errors=... (warnings do not stop the build
# unless that asks), --autograd-api=.... SARIF writes the diagnostics as SARIF 2.1.0 (with several
# sources, one file each: <file> with the source's name before its extension).
#
# Runs funcgen on each annotated source as a build step. For model.cpp it generates
# model.funcgen.h (include it to call the generated functions) and model.funcgen.cpp, which
# includes model.cpp and is compiled in its place (so generated code can call static helpers).
# The target's include directories, definitions and C++ standard are passed to funcgen; a
# DEPFILE makes edits to any header the source includes re-run it.
function(funcgen_generate target)
  cmake_parse_arguments(FG "" "OUTPUT_DIR;SARIF" "SOURCES;OPTIONS" ${ARGN})
  if(NOT FG_SOURCES)
    message(FATAL_ERROR "funcgen_generate(${target}): SOURCES is required")
  endif()
  if(NOT FG_OUTPUT_DIR)
    set(FG_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR}/funcgen_${target})
  endif()
  if(TARGET funcgen::funcgen)
    set(tool $<TARGET_FILE:funcgen::funcgen>)
    set(tool_dep funcgen::funcgen)
  else()
    message(FATAL_ERROR "funcgen_generate: the funcgen::funcgen target is not defined")
  endif()
  set(includes "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(defines "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  get_target_property(std ${target} CXX_STANDARD)
  if(NOT std)
    set(std 17)
  endif()
  # The runtime's headers, wherever funcgen::runtime comes from.
  set(runtime_includes "$<TARGET_PROPERTY:funcgen::runtime,INTERFACE_INCLUDE_DIRECTORIES>")
  foreach(src IN LISTS FG_SOURCES)
    get_filename_component(abs ${src} ABSOLUTE)
    get_filename_component(stem ${src} NAME_WE)
    set(header ${FG_OUTPUT_DIR}/${stem}.funcgen.h)
    set(generated ${FG_OUTPUT_DIR}/${stem}.funcgen.cpp)
    set(depfile ${FG_OUTPUT_DIR}/${stem}.funcgen.d)
    set(sarif_option "")
    if(FG_SARIF)
      list(LENGTH FG_SOURCES n_sources)
      if(n_sources EQUAL 1)
        set(sarif_option --sarif=${FG_SARIF})
      else()
        get_filename_component(sarif_dir ${FG_SARIF} DIRECTORY)
        get_filename_component(sarif_stem ${FG_SARIF} NAME_WLE)
        get_filename_component(sarif_ext ${FG_SARIF} LAST_EXT)
        set(sarif_option --sarif=${sarif_dir}/${sarif_stem}.${stem}${sarif_ext})
      endif()
    endif()
    add_custom_command(
      OUTPUT ${header} ${generated}
      COMMAND ${tool} ${abs} -o ${FG_OUTPUT_DIR} --depfile ${depfile} ${sarif_option} ${FG_OPTIONS} --
              -std=c++${std} "$<$<BOOL:${includes}>:-I$<JOIN:${includes},;-I>>"
              "$<$<BOOL:${runtime_includes}>:-I$<JOIN:${runtime_includes},;-I>>"
              "$<$<BOOL:${defines}>:-D$<JOIN:${defines},;-D>>"
      DEPENDS ${abs} ${tool_dep}
      DEPFILE ${depfile}
      COMMENT "funcgen ${src}"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    set_source_files_properties(${abs} TARGET_DIRECTORY ${target} PROPERTIES HEADER_FILE_ONLY ON)
    target_sources(${target} PRIVATE ${generated})
  endforeach()
  target_include_directories(${target} PRIVATE ${FG_OUTPUT_DIR})
  target_link_libraries(${target} PRIVATE funcgen::runtime)
endfunction()
