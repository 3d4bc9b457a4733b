# The arch86_course test: a student with an RTX 30xx (compute capability
# 8.6) configures the whole course, tools on, with
# CMAKE_CUDA_ARCHITECTURES=86. Configure must name every day that needs more
# and leave it out; the days it keeps must build for sm_<ARCH>, start and
# refuse bad arguments; the course's own checks must pass in that build,
# the left-out days' promoted evidence still valid and their pages untouched.
#
#   cmake -DSOURCE=<repo> -DBUILD=<folder> -DARCH=86 -DVENV=<venv> -P tests/arch_course.cmake
#
# A test, not the build's definition: it lives beside the other tests, out
# of cmake/ (which the sources digest reads and configure includes).
#
# VENV: the main build's tool environment, shared (nothing to install).
# Only what the architecture changes is checked again in there, at a cost
# that does not grow with the days: every day is configured (which days
# are left out is decided there), and one representative of each minimum
# compute capability the build keeps is built for sm_<ARCH> and checked
# (a day's architectures follow from its minimum alone; its own code is
# compiled for its minimum's PTX and the reference GPU by the main build).
# What does not depend on the architecture (the tools' tests, the site and
# its browser test, the header compiled part by part, formatting) runs
# once, in the main build.
file(REMOVE_RECURSE "${BUILD}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -S "${SOURCE}" -B "${BUILD}" -DCMAKE_CUDA_ARCHITECTURES=${ARCH}
          -DCMAKE_BUILD_TYPE=Release -DCOURSE_VENV=${VENV} -DCOURSE_SITE=OFF
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure with CMAKE_CUDA_ARCHITECTURES=${ARCH} failed:\n${out}${err}")
endif()

file(READ "${BUILD}/course-manifest.json" manifest)
string(JSON count LENGTH "${manifest}" lessons)
math(EXPR last "${count} - 1")
set(pages "")
set(kept "")
set(mins "")
set(built "")
foreach(i RANGE ${last})
  string(JSON target GET "${manifest}" lessons ${i} target)
  string(JSON dir GET "${manifest}" lessons ${i} dir)
  string(JSON day GET "${manifest}" lessons ${i} day)
  string(JSON is_built GET "${manifest}" lessons ${i} built)
  string(JSON min_cc GET "${manifest}" lessons ${i} min_cc)
  string(REPLACE "." "" min "${min_cc}")
  if(min GREATER ARCH)
    if(is_built OR NOT out MATCHES "${target} left out")
      message(FATAL_ERROR "${target} needs ${min_cc}: configure should name it as left out")
    endif()
    file(SHA256 "${SOURCE}/${dir}/README.md" hash)
    list(APPEND pages "${dir}/README.md=${hash}")
    continue()
  endif()
  if(NOT is_built)
    message(FATAL_ERROR "${target} needs only ${min_cc} but was left out at ${ARCH}")
  endif()
  list(APPEND kept ${target})
  # The representative of its minimum: the lowest day that has it.
  list(APPEND mins ${min})
  if(NOT DEFINED first_${min} OR day LESS first_day_${min})
    set(first_${min} ${target})
    set(first_day_${min} ${day})
  endif()
endforeach()
foreach(min IN LISTS mins)
  list(APPEND built ${first_${min}})
endforeach()
list(REMOVE_DUPLICATES built)

execute_process(COMMAND ${CMAKE_COMMAND} --build "${BUILD}" -j 2 --target course_standalone ${built}
                OUTPUT_VARIABLE out2 ERROR_VARIABLE err2 RESULT_VARIABLE rc2)
if(NOT rc2 EQUAL 0)
  message(FATAL_ERROR "building the course for sm_${ARCH} failed:\n${out2}${err2}")
endif()

# The course's tools and checks, as the build and its tests run them, on
# the days built here: the snippets of every day kept (one run), the
# evidence's state (the build writes it before its pages), then the pages
# rendered in memory by the prose check (not held to the committed ones: a
# page's machine-code excerpt is the H200's sm_90 code, which this build
# does not hold, and the page there says so), evidence, machine code, and
# the programs' own tests.
set(tool ${CMAKE_COMMAND} -E env "COURSE_PYTHON=${VENV}/bin/python" "COURSE_BUILD_DIR=${BUILD}" "${SOURCE}/tools/course")
set(only "")
foreach(target IN LISTS built)
  list(APPEND only --lesson ${target})
endforeach()
set(failed "")
foreach(check "snippets;-o;${BUILD}/snippets" "evidence;state;-o;${BUILD}/evidence-state.json" "prose;${only}"
              "evidence;verify" "sass;${built}" "lint")
  execute_process(COMMAND ${tool} ${check} OUTPUT_VARIABLE o ERROR_VARIABLE e RESULT_VARIABLE r)
  if(NOT r EQUAL 0)
    string(REPLACE ";" " " shown "${check}")
    string(APPEND failed "tools/course ${shown} (exit ${r}):\n${o}${e}\n")
  endif()
endforeach()
string(REPLACE ";" "|" names "${built}")
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir "${BUILD}" -j 2 --output-on-failure
                        -R "^(course_gpu_setup|(${names})_(gpu|starts|bad_args|huge_size))$"
                OUTPUT_VARIABLE out3 ERROR_VARIABLE err3 RESULT_VARIABLE rc3)
if(NOT rc3 EQUAL 0)
  string(APPEND failed "the programs' tests:\n${out3}${err3}")
endif()
if(failed)
  message(FATAL_ERROR "the course's checks failed in the sm_${ARCH} build:\n${failed}")
endif()
foreach(entry IN LISTS pages)
  string(REPLACE "=" ";" entry "${entry}")
  list(GET entry 0 page)
  list(GET entry 1 before)
  file(SHA256 "${SOURCE}/${page}" after)
  if(NOT after STREQUAL before)
    message(FATAL_ERROR "${page} changed in a build that leaves its lesson out")
  endif()
endforeach()
string(REGEX MATCH "[0-9]+ tests passed[^\n]*|tests passed[^\n]*" summary "${out3}")
message(STATUS "arch ${ARCH}: built and checked ${built} (of ${kept}), the others named and left out, "
               "their pages untouched; ${summary}")
