# course_add_lesson(): declares one day of the course.
#
#   course_add_lesson(<target>
#     DAY <n> TOPIC <text> DIR <folder under lessons/>
#     SOURCES <file>...          relative to DIR
#     MIN_CC <major.minor>       the capability gate's minimum
#     TEST_ARGS <arg>...         the small run CTest makes
#     VARIANTS <target>=<DEFINE>...)   extra builds, not in "all"
#
# It builds the program for CMAKE_CUDA_ARCHITECTURES (sm_90 by default,
# see the top CMakeLists.txt) against the one header in common/, registers
# a CTest test labelled "gpu" whose waived exit code (2) reads as a skip,
# and records the day in build/course-manifest.json for the Python tools.

set(COURSE_WAIVED_EXIT_CODE 2)
# The flags every day compiles with; the manifest repeats them so that a
# page's "compile it alone" line is the one the build used.
set(COURSE_CUDA_OPTIONS -O3 -lineinfo)
set_property(GLOBAL PROPERTY COURSE_LESSONS "")

function(course_add_lesson target)
  cmake_parse_arguments(PARSE_ARGV 1 L "" "DAY;TOPIC;DIR;MIN_CC"
                        "SOURCES;TEST_ARGS;VARIANTS")
  foreach(required DAY TOPIC DIR SOURCES MIN_CC)
    if(NOT L_${required})
      message(FATAL_ERROR "course_add_lesson(${target}): ${required} is required")
    endif()
  endforeach()
  if(NOT L_MIN_CC MATCHES "^[0-9]+\\.[0-9]+$")
    message(FATAL_ERROR "course_add_lesson(${target}): MIN_CC must look like 9.0, got '${L_MIN_CC}'")
  endif()

  set(dir "${CMAKE_CURRENT_SOURCE_DIR}/${L_DIR}")
  set(sources "")
  set(rel_sources "")
  foreach(src IN LISTS L_SOURCES)
    if(NOT EXISTS "${dir}/${src}")
      message(FATAL_ERROR "course_add_lesson(${target}): ${dir}/${src} does not exist")
    endif()
    list(APPEND sources "${dir}/${src}")
    file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${dir}/${src}")
    list(APPEND rel_sources "${rel}")
  endforeach()

  set(all_targets ${target})
  set(all_defines "")
  foreach(variant IN LISTS L_VARIANTS)
    string(REPLACE "=" ";" pair "${variant}")
    list(GET pair 0 vtarget)
    list(GET pair 1 vdefine)
    list(APPEND all_targets ${vtarget})
    list(APPEND all_defines ${vdefine})
  endforeach()

  foreach(t IN LISTS all_targets)
    if(t STREQUAL target)
      add_executable(${t} ${sources})
    else()
      add_executable(${t} EXCLUDE_FROM_ALL ${sources})
    endif()
    target_include_directories(${t} PRIVATE "${PROJECT_SOURCE_DIR}/common")
    target_compile_features(${t} PRIVATE cuda_std_17 cxx_std_17)
    target_compile_options(${t} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${COURSE_CUDA_OPTIONS}>)
    target_link_libraries(${t} PRIVATE CUDA::cudart)
    set_target_properties(${t} PROPERTIES
      CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF
      RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bin")
  endforeach()
  list(LENGTH all_defines n_variants)
  if(n_variants GREATER 0)
    foreach(i RANGE 1 ${n_variants})
      list(GET all_targets ${i} vtarget)
      math(EXPR j "${i} - 1")
      list(GET all_defines ${j} vdefine)
      target_compile_definitions(${vtarget} PRIVATE ${vdefine})
    endforeach()
  endif()

  # The small run. On a machine without a suitable GPU the program prints
  # why and exits 2, which CTest reports as skipped, never as passed.
  add_test(NAME ${target}_gpu COMMAND ${target} ${L_TEST_ARGS})
  set_tests_properties(${target}_gpu PROPERTIES
    LABELS gpu SKIP_RETURN_CODE ${COURSE_WAIVED_EXIT_CODE} TIMEOUT 300)

  # --help exits before the capability gate: proves the binary was built
  # and starts, on any machine.
  add_test(NAME ${target}_starts COMMAND ${target} --help)
  set_tests_properties(${target}_starts PROPERTIES LABELS cpu)

  # What the manifest says about this day (one JSON object).
  list(GET CMAKE_CUDA_ARCHITECTURES 0 arch)
  string(REGEX REPLACE "-.*" "" arch "${arch}")
  string(JOIN " " options ${COURSE_CUDA_OPTIONS})
  set(compile "nvcc -std=c++17 ${options} -arch=sm_${arch} -I common -o ${target} ${rel_sources}")
  file(RELATIVE_PATH rel_dir "${PROJECT_SOURCE_DIR}" "${dir}")
  set(json "{}")
  string(JSON json SET "${json}" target "\"${target}\"")
  string(JSON json SET "${json}" day "${L_DAY}")
  string(JSON json SET "${json}" topic "\"${L_TOPIC}\"")
  string(JSON json SET "${json}" dir "\"${rel_dir}\"")
  string(JSON json SET "${json}" min_cc "\"${L_MIN_CC}\"")
  string(JSON json SET "${json}" sources "[]")
  set(k 0)
  foreach(rel IN LISTS rel_sources)
    string(JSON json SET "${json}" sources ${k} "\"${rel}\"")
    math(EXPR k "${k} + 1")
  endforeach()
  string(JSON json SET "${json}" header "\"common/course.cuh\"")
  string(JSON json SET "${json}" binary "\"${CMAKE_BINARY_DIR}/bin/${target}\"")
  string(JSON json SET "${json}" compile_command "\"${compile}\"")
  string(JSON json SET "${json}" build_command "\"cmake --build build --target ${target}\"")
  string(JSON json SET "${json}" run_command "\"build/bin/${target}\"")
  string(JSON json SET "${json}" test_args "[]")
  set(k 0)
  foreach(a IN LISTS L_TEST_ARGS)
    string(JSON json SET "${json}" test_args ${k} "\"${a}\"")
    math(EXPR k "${k} + 1")
  endforeach()
  string(JSON json SET "${json}" nvcc_flags "\"-std=c++17 ${options} -arch=sm_${arch}\"")
  set_property(GLOBAL APPEND PROPERTY COURSE_LESSONS "${json}")
endfunction()

# Writes build/course-manifest.json: every day, as declared above.
function(course_write_manifest)
  get_property(lessons GLOBAL PROPERTY COURSE_LESSONS)
  set(out "{\"cuda_architectures\": \"${CMAKE_CUDA_ARCHITECTURES}\", \"nvcc_version\": \"${CMAKE_CUDA_COMPILER_VERSION}\", \"waived_exit_code\": ${COURSE_WAIVED_EXIT_CODE}, \"lessons\": [")
  set(sep "")
  foreach(l IN LISTS lessons)
    string(APPEND out "${sep}\n  ${l}")
    set(sep ",")
  endforeach()
  string(APPEND out "\n]}\n")
  file(WRITE "${CMAKE_BINARY_DIR}/course-manifest.json.tmp" "${out}")
  file(RENAME "${CMAKE_BINARY_DIR}/course-manifest.json.tmp" "${CMAKE_BINARY_DIR}/course-manifest.json")
endfunction()
