# The arch86_course test: a student with an RTX 30xx (compute capability
# 8.6) configures the whole course, tools on, with
# CMAKE_CUDA_ARCHITECTURES=86. Configure must name every day that needs more
# and leave it out; the build must build every other day and the tools'
# outputs; the course's own checks must pass in that build, the left-out
# days' promoted evidence still valid and their pages untouched.
#
#   cmake -DSOURCE=<repo> -DBUILD=<folder> -DARCH=86 -DVENV=<venv> -P CheckArchCourse.cmake
#
# VENV: the main build's tool environment, shared (nothing to install).
# Only what the architecture changes is checked again in there: which days
# build (for sm_<ARCH>), their programs start and refuse bad arguments, and
# the pages, prose, evidence and SASS checks with days left out. What does
# not depend on it (the tools' tests, the site and its browser test, the
# header compiled part by part, formatting) runs once, in the main build.
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
set(built "")
set(pages "")
foreach(i RANGE ${last})
  string(JSON target GET "${manifest}" lessons ${i} target)
  string(JSON dir GET "${manifest}" lessons ${i} dir)
  string(JSON is_built GET "${manifest}" lessons ${i} built)
  string(JSON min_cc GET "${manifest}" lessons ${i} min_cc)
  string(REPLACE "." "" min "${min_cc}")
  if(min GREATER ARCH)
    if(is_built OR NOT out MATCHES "${target} left out")
      message(FATAL_ERROR "${target} needs ${min_cc}: configure should name it as left out")
    endif()
    file(SHA256 "${SOURCE}/${dir}/README.md" hash)
    list(APPEND pages "${dir}/README.md=${hash}")
  else()
    if(NOT is_built)
      message(FATAL_ERROR "${target} needs only ${min_cc} but was left out at ${ARCH}")
    endif()
    list(APPEND built ${target})
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${BUILD}" -j 2
                OUTPUT_VARIABLE out2 ERROR_VARIABLE err2 RESULT_VARIABLE rc2)
if(NOT rc2 EQUAL 0)
  message(FATAL_ERROR "building the course for sm_${ARCH} failed:\n${out2}${err2}")
endif()
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir "${BUILD}" -j 2 --output-on-failure
                        -R "^(pages_up_to_date|prose_numbers|evidence_verify|sass_expectations|one_header|day[0-9]+_.*)$"
                OUTPUT_VARIABLE out3 ERROR_VARIABLE err3 RESULT_VARIABLE rc3)
if(NOT rc3 EQUAL 0)
  message(FATAL_ERROR "the course's checks failed in the sm_${ARCH} build:\n${out3}${err3}")
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
message(STATUS "arch ${ARCH}: built ${built}, the others named and left out, their pages untouched; ${summary}")
