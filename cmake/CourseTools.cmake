# The Python side of the course, wired into the build (its environment,
# build/venv, is made by CourseVenv.cmake, before the lessons are declared):
#   - the build writes the standalone files, renders the pages (which
#     extract each lesson's snippets and hold their names course-wide) and
#     builds the site; `tools/course snippets` writes the snippets as
#     Markdown files for an author who wants them, and nothing reads them;
#   - CTest runs the tools' tests and checks.

set(COURSE_TOOL "${PROJECT_SOURCE_DIR}/tools/course")
set(tool_env "COURSE_PYTHON=${COURSE_PYTHON}" "COURSE_BUILD_DIR=${CMAKE_BINARY_DIR}")
file(GLOB_RECURSE tool_sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tools/coursetools/*.py")
file(GLOB_RECURSE header CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/common/*.cuh")

get_property(lessons GLOBAL PROPERTY COURSE_LESSONS)
set(page_inputs "")
foreach(l IN LISTS lessons)
  string(JSON target GET "${l}" target)
  string(JSON dir GET "${l}" dir)
  string(JSON built GET "${l}" built)
  if(NOT built)
    continue()  # left out of this build: its page stays as it is
  endif()
  string(JSON n LENGTH "${l}" sources)
  math(EXPR last "${n} - 1")
  set(srcs "")
  foreach(i RANGE ${last})
    string(JSON s GET "${l}" sources ${i})
    list(APPEND srcs "${PROJECT_SOURCE_DIR}/${s}")
  endforeach()
  # Every file of the folder the sources digest reads (a header beside the
  # .cu included, say), but the page and its figures, which render writes.
  file(GLOB_RECURSE lesson_files LIST_DIRECTORIES false CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/${dir}/*")
  list(FILTER lesson_files EXCLUDE REGEX "/figures/|[.]md$")
  list(APPEND page_inputs ${srcs} ${lesson_files} "${PROJECT_SOURCE_DIR}/${dir}/README.md.j2")
  if(EXISTS "${PROJECT_SOURCE_DIR}/${dir}/lesson.toml")
    list(APPEND page_inputs "${PROJECT_SOURCE_DIR}/${dir}/lesson.toml")
  endif()
  if(TARGET ${target})
    list(APPEND page_inputs ${target})
  endif()
endforeach()

# The evidence's state, once per build: every promotion verified (its
# signatures, records, digests, the build's flags), written to one file
# that the pages, the site, the browser test, compare and serve read; each
# of them refuses a state older than the evidence or sources it covers.
# It depends on everything the state covers (evidence/state.py's
# fingerprint), so that the build writes it again whenever any of it
# changed: every evidence file, all of common/, each lesson's folder, the
# manifest and what configure writes beside it (a re-configure had left
# the state older than CMakeCache.txt, and render refusing it).
set(state "${CMAKE_BINARY_DIR}/evidence-state.json")
file(GLOB_RECURSE evidence_files CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/evidence/*")
list(FILTER evidence_files EXCLUDE REGEX "/[.]promote[.]lock$")
file(GLOB_RECURSE common_files LIST_DIRECTORIES false CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/common/*")
# The build's definition, as the digest reads it (sources/digest.py):
# CMakePresets.json among it, which configure does not track.
file(GLOB build_files LIST_DIRECTORIES false CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/cmake/*")
foreach(f CMakeLists.txt CMakePresets.json lessons/CMakeLists.txt research/experiments/CMakeLists.txt)
  list(APPEND build_files "${PROJECT_SOURCE_DIR}/${f}")
endforeach()
add_custom_command(OUTPUT "${state}"
  COMMAND ${CMAKE_COMMAND} -E env ${tool_env} "${COURSE_TOOL}" evidence state -o "${state}"
  DEPENDS ${page_inputs} ${common_files} ${build_files} ${tool_sources} ${evidence_files}
          "${CMAKE_BINARY_DIR}/course-manifest.json"
          "${CMAKE_BINARY_DIR}/CMakeCache.txt" "${CMAKE_BINARY_DIR}/compile_commands.json"
  COMMENT "course: the evidence's state (every promotion verified)"
  VERBATIM)

# The pages (committed: students read them in place) and the README's
# day table, in one render; the stamp records that this build did it.
# A lesson whose code changed since its promoted run is named here, with
# what to do.
set(stamp "${CMAKE_BINARY_DIR}/pages.stamp")
add_custom_command(OUTPUT "${stamp}"
  COMMAND ${CMAKE_COMMAND} -E env ${tool_env} "${COURSE_TOOL}" render
  COMMAND ${CMAKE_COMMAND} -E touch "${stamp}"
  DEPENDS "${state}" ${page_inputs} ${header} ${tool_sources} "${PROJECT_SOURCE_DIR}/README.md"
  COMMENT "course: pages and the README's day table"
  VERBATIM)

add_custom_target(course_pages ALL DEPENDS "${stamp}")
add_custom_target(course_standalone ALL
  COMMAND ${CMAKE_COMMAND} -E env ${tool_env} "${COURSE_TOOL}" standalone -o "${CMAKE_BINARY_DIR}/standalone"
  COMMENT "course: single-file programs for Compiler Explorer"
  VERBATIM)
if(COURSE_SITE)
  add_custom_target(course_site ALL
    COMMAND ${CMAKE_COMMAND} -E env ${tool_env} "${COURSE_TOOL}" site build -o "${CMAKE_BINARY_DIR}/site"
    DEPENDS course_pages course_standalone
    COMMENT "course: static site (MkDocs, warnings are errors)"
    VERBATIM)
endif()

# -- tests -----------------------------------------------------------------
# Every test's limit: far above what an honest run takes on a loaded
# machine (the limits inside the tools count CPU time).
set(COURSE_TEST_TIMEOUT 1800)
function(course_tool_test name)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -E env ${tool_env} "${COURSE_TOOL}" ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS cpu)
endfunction()
course_tool_test(one_header lint)
course_tool_test(format format)
course_tool_test(pages_up_to_date render --check)
course_tool_test(prose_numbers prose)
course_tool_test(standalone_up_to_date standalone --check -o "${CMAKE_BINARY_DIR}/standalone")
course_tool_test(evidence_verify evidence verify)
course_tool_test(sass_expectations sass)
# The nvbench benchmarks are built by the GPU review, not by every build
# (they compile each lesson a second time); this test compiles and links
# them all, so that none rots where no GPU runs them.
if(TARGET course_nvbench)
  add_test(NAME nvbench_builds COMMAND ${CMAKE_COMMAND} --build "${CMAKE_BINARY_DIR}" --target course_nvbench)
  set_tests_properties(nvbench_builds PROPERTIES LABELS cpu TIMEOUT ${COURSE_TEST_TIMEOUT} COST 30)
endif()
# The tools' tests, one CTest test a file (tools_pytest_<file>), so that
# `ctest -j` runs them side by side and a failure or a timeout names the
# file. Limits are far above what an honest run takes on a loaded machine
# (the limits inside the tools count CPU time); pytest's faulthandler
# (tools/tests/pytest.ini) prints every thread's stack when one test runs
# past its own limit, so a hang names the test and where it hangs.
file(GLOB tool_tests CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/tools/tests/test_*.py")
foreach(t IN LISTS tool_tests)
  get_filename_component(stem "${t}" NAME_WE)
  string(REGEX REPLACE "^test_" "" stem "${stem}")
  add_test(NAME tools_pytest_${stem}
    COMMAND ${CMAKE_COMMAND} -E env ${tool_env} "${COURSE_PYTHON}" -m pytest -q -c "${PROJECT_SOURCE_DIR}/tools/tests/pytest.ini"
            --rootdir "${PROJECT_SOURCE_DIR}/tools/tests" "${t}")
  set_tests_properties(tools_pytest_${stem} PROPERTIES LABELS "cpu;tools" TIMEOUT ${COURSE_TEST_TIMEOUT})
endforeach()
# A student's GPU: the whole course, tools on, configured, built and
# checked for compute capability 8.6 (an RTX 30xx) in a folder of its own;
# the days that need more are named and left out, their pages untouched.
add_test(NAME arch86_course
  COMMAND ${CMAKE_COMMAND} -DSOURCE=${PROJECT_SOURCE_DIR} -DBUILD=${CMAKE_BINARY_DIR}/arch86 -DARCH=86
          -DVENV=${COURSE_VENV} -P "${PROJECT_SOURCE_DIR}/tests/arch_course.cmake")
# COST: CTest starts the longest tests first, so `-j 2` ends sooner.
set_tests_properties(arch86_course PROPERTIES LABELS cpu TIMEOUT ${COURSE_TEST_TIMEOUT} COST 60)
if(COURSE_SITE)
  course_tool_test(site_browser site test -o "${CMAKE_BINARY_DIR}/site" --screenshots "${CMAKE_BINARY_DIR}/screenshots")
  set_tests_properties(site_browser PROPERTIES TIMEOUT ${COURSE_TEST_TIMEOUT} COST 90)
endif()
