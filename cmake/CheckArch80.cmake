# The arch80_build test: a student with an Ampere GPU (compute capability
# 8.0) configures with CMAKE_CUDA_ARCHITECTURES=80. Configure must name
# every day that needs more and leave it out; the build must build every
# other day. Run as: cmake -DSOURCE=<repo> -DBUILD=<folder> -P CheckArch80.cmake
file(REMOVE_RECURSE "${BUILD}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -S "${SOURCE}" -B "${BUILD}" -DCMAKE_CUDA_ARCHITECTURES=80
          -DCOURSE_TOOLS=OFF -DCMAKE_BUILD_TYPE=Release
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure with CMAKE_CUDA_ARCHITECTURES=80 failed:\n${out}${err}")
endif()
file(READ "${BUILD}/course-manifest.json" manifest)
string(JSON count LENGTH "${manifest}" lessons)
math(EXPR last "${count} - 1")
set(built "")
foreach(i RANGE ${last})
  string(JSON target GET "${manifest}" lessons ${i} target)
  string(JSON is_built GET "${manifest}" lessons ${i} built)
  string(JSON min_cc GET "${manifest}" lessons ${i} min_cc)
  if(min_cc VERSION_GREATER 8.0)
    if(is_built OR NOT out MATCHES "${target} left out")
      message(FATAL_ERROR "${target} needs ${min_cc}: configure should name it as left out")
    endif()
  else()
    if(NOT is_built)
      message(FATAL_ERROR "${target} needs only ${min_cc} but was left out at 8.0")
    endif()
    list(APPEND built ${target})
  endif()
endforeach()
if(built)
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${BUILD}" -j 2 --target ${built}
                  OUTPUT_VARIABLE out2 ERROR_VARIABLE err2 RESULT_VARIABLE rc2)
  if(NOT rc2 EQUAL 0)
    message(FATAL_ERROR "building ${built} for sm_80 failed:\n${out2}${err2}")
  endif()
endif()
message(STATUS "arch 80: built ${built}; the others were named and left out")
