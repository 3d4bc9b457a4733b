# course_add_lesson(): declares one day of the course, from the lesson's own
# folder (lessons/dayNN_topic/CMakeLists.txt):
#
#   course_add_lesson(<target>
#     DAY <n>                     the day number
#     TOPIC <text>                one line: what the day teaches
#     SOURCES <file>...           relative to the lesson's folder
#     MIN_CC <major.minor>        the capability gate's minimum
#     TEST_ARGS <arg>...          the small run CTest makes
#     VARIANTS <target>=<DEFINE>...   extra builds (negative examples),
#                                     not in "all"
#     TIMELINE <target>           the build with per-block timestamps
#                                 (COURSE_TIMELINE), not in "all"
#     LIBRARIES <lib>...          CUDA toolkit libraries the program links
#                                 (COURSE_TOOLKIT_LIBRARIES: cublas, curand,
#                                 cufft, ...), as CUDA::<lib>
#     NVBENCH <file>)             the day's headline rows as nvbench
#                                 benchmarks (target <target>_nvbench, built
#                                 where nvbench is found, not in "all")
#
# Everything else a tool needs to know about the lesson (what the review
# runs, which kernels to profile, its SASS expectations, its screenshots)
# is in lesson.toml beside the sources.
#
# Architectures: each lesson builds for its own minimum. Unless the user
# chose CMAKE_CUDA_ARCHITECTURES (or CUDAARCHS), a lesson gets PTX for its
# minimum (the driver compiles it for any newer GPU) plus machine code for
# the course's reference GPU (COURSE_REFERENCE_ARCH, the H200's sm_90, on
# which the evidence is recorded). When the user chose, a lesson gets the
# chosen architectures at or above its minimum, and one with none left is
# left out of the build, by name.

set(COURSE_WAIVED_EXIT_CODE 2)
# The toolkit libraries a lesson may link, by their FindCUDAToolkit names:
# a fixed list, so that what links a lesson's program is the toolkit's and
# nothing else (the flags check reads the link line; the digest reads the
# lesson's CMakeLists.txt).
set(COURSE_TOOLKIT_LIBRARIES cublas cublasLt cufft curand cusolver cusparse nvrtc)
# The flags every day compiles with (the tools' manifest.nvcc_flags()
# repeats them, so that a page's "compile it alone" line is the one the
# build used).
set(COURSE_CUDA_OPTIONS -O3 -lineinfo)
set(COURSE_REFERENCE_ARCH 90 CACHE STRING
    "The GPU architecture the course's evidence is recorded on")
set_property(GLOBAL PROPERTY COURSE_LESSONS "")
set_property(GLOBAL PROPERTY COURSE_LEFT_OUT "")

# The architectures of `archs` at or above `min` (e.g. 90 for 9.0);
# "native", "all" and "all-major" pass through: the runtime gate decides.
function(_course_archs_for out min archs)
  set(kept "")
  foreach(a IN LISTS archs)
    if(a MATCHES "^(native|all|all-major)$")
      list(APPEND kept "${a}")
    elseif(a MATCHES "^([0-9]+)")
      if(CMAKE_MATCH_1 GREATER_EQUAL min)
        list(APPEND kept "${a}")
      endif()
    endif()
  endforeach()
  set(${out} "${kept}" PARENT_SCOPE)
endfunction()

function(_course_json_list out list)
  set(json "[]")
  set(k 0)
  foreach(item IN LISTS list)
    string(JSON json SET "${json}" ${k} "\"${item}\"")
    math(EXPR k "${k} + 1")
  endforeach()
  set(${out} "${json}" PARENT_SCOPE)
endfunction()

# A lesson's CMakeLists.txt holds one course_add_lesson() call and nothing
# else: no custom command, post-build step, target or flag of its own, so
# that what shapes its binary is this file's function and that call's
# arguments, both in the sources digest. lessons/CMakeLists.txt calls this
# before it adds the folder; anything else is refused, naming its line.
# (tools/coursetools/sources/buildfile.py checks the same on the tokens.)
function(course_check_lesson_file file)
  file(READ "${file}" text)
  # Comments dropped, line breaks kept: a lesson's arguments hold no '#'
  # (TOPIC refuses one).
  string(REGEX REPLACE "#[^\n]*" "" code "${text}")
  set(call_re "^[ \t\r\n]*course_add_lesson[ \t]*[(][^()]*[)]")
  string(REGEX MATCH "${call_re}" call "${code}")
  string(LENGTH "${call}" skip)
  string(SUBSTRING "${code}" ${skip} -1 rest)
  if(call AND rest MATCHES "^[ \t\r\n]*$")
    return()
  endif()
  string(REGEX MATCH "^[ \t\r\n]*" blank "${rest}")
  string(LENGTH "${blank}" more)
  math(EXPR at "${skip} + ${more}")
  string(SUBSTRING "${code}" 0 ${at} head)
  string(REGEX MATCHALL "\n" breaks "${head}")
  list(LENGTH breaks line)
  math(EXPR line "${line} + 1")
  message(FATAL_ERROR "${file}:${line}: a lesson's CMakeLists.txt holds one course_add_lesson(...) call "
                      "and nothing else (no custom commands, post-build steps, targets or flags of its own)")
endfunction()

function(course_add_lesson target)
  cmake_parse_arguments(PARSE_ARGV 1 L "" "DAY;TOPIC;MIN_CC;TIMELINE;NVBENCH"
                        "SOURCES;TEST_ARGS;VARIANTS;LIBRARIES")
  set(where "${CMAKE_CURRENT_LIST_FILE}")
  if(L_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: course_add_lesson(${target}): unexpected arguments '${L_UNPARSED_ARGUMENTS}' "
                        "(a ';' in TOPIC splits it; TOPIC takes letters, digits, spaces and , . : ' + / & ! ? -)")
  endif()
  foreach(required DAY TOPIC SOURCES MIN_CC)
    if(NOT L_${required})
      message(FATAL_ERROR "${where}: course_add_lesson(${target}): ${required} is required")
    endif()
  endforeach()
  if(NOT target MATCHES "^day[0-9]+_[a-z0-9_]+$")
    message(FATAL_ERROR "${where}: course_add_lesson(${target}): the target must look like dayNN_topic")
  endif()
  if(NOT L_MIN_CC MATCHES "^([0-9]+)\\.([0-9])$")
    message(FATAL_ERROR "${where}: course_add_lesson(${target}): MIN_CC must look like 9.0, got '${L_MIN_CC}'")
  endif()
  set(min "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
  # One line a page, a CMake list and a JSON string all hold as it is.
  if(NOT L_TOPIC MATCHES "^[A-Za-z0-9 ,.:'+/&!?-]+$")
    message(FATAL_ERROR "${where}: course_add_lesson(${target}): TOPIC takes letters, digits, spaces and "
                        ", . : ' + / & ! ? - only, got '${L_TOPIC}'")
  endif()
  if(NOT L_DAY MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "${where}: course_add_lesson(${target}): DAY must be a whole number without leading zeros, "
                        "got '${L_DAY}'")
  endif()
  get_property(days GLOBAL PROPERTY COURSE_DAYS)
  if(L_DAY IN_LIST days)
    message(FATAL_ERROR "${where}: course_add_lesson(${target}): day ${L_DAY} is declared twice")
  endif()
  set_property(GLOBAL APPEND PROPERTY COURSE_DAYS "${L_DAY}")

  foreach(lib IN LISTS L_LIBRARIES)
    if(NOT lib IN_LIST COURSE_TOOLKIT_LIBRARIES)
      string(JOIN ", " known ${COURSE_TOOLKIT_LIBRARIES})
      message(FATAL_ERROR "${where}: course_add_lesson(${target}): LIBRARIES takes CUDA toolkit libraries "
                          "(${known}), got '${lib}'")
    endif()
  endforeach()
  set(dir "${CMAKE_CURRENT_SOURCE_DIR}")
  file(RELATIVE_PATH rel_dir "${PROJECT_SOURCE_DIR}" "${dir}")
  set(sources "")
  set(rel_sources "")
  foreach(src IN LISTS L_SOURCES)
    if(NOT EXISTS "${dir}/${src}")
      message(FATAL_ERROR "${where}: course_add_lesson(${target}): ${rel_dir}/${src} does not exist")
    endif()
    list(APPEND sources "${dir}/${src}")
    list(APPEND rel_sources "${rel_dir}/${src}")
  endforeach()

  # The course's architectures (what its evidence is recorded with), and
  # this build's: the user's where chosen.
  if(min LESS COURSE_REFERENCE_ARCH)
    set(course_archs "${min}-virtual;${COURSE_REFERENCE_ARCH}-real")
  else()
    set(course_archs "${min}")
  endif()
  set(archs "${course_archs}")
  if(COURSE_USER_ARCHITECTURES)
    _course_archs_for(archs ${min} "${COURSE_USER_ARCHITECTURES}")
  endif()
  set(built TRUE)
  if(NOT archs)
    set(built FALSE)
    set_property(GLOBAL APPEND PROPERTY COURSE_LEFT_OUT "${target}")
    message(STATUS "course: ${target} left out: it needs compute capability ${L_MIN_CC}, "
                   "and CMAKE_CUDA_ARCHITECTURES=${COURSE_USER_ARCHITECTURES} has nothing at or above it")
  endif()

  # The variants, declared whether or not this build makes them (the
  # manifest names them either way: lesson.toml's review steps refer to them).
  set(variant_targets "")
  foreach(v IN LISTS L_VARIANTS)
    if(NOT v MATCHES "^([a-z0-9_]+)=[A-Z0-9_]+$")
      message(FATAL_ERROR "${where}: course_add_lesson(${target}): VARIANTS takes target=DEFINE, got '${v}'")
    endif()
    list(APPEND variant_targets "${CMAKE_MATCH_1}")
  endforeach()
  if(built)
    set(all_targets "${target}=" ${L_VARIANTS})
    if(L_TIMELINE)
      list(APPEND all_targets "${L_TIMELINE}=COURSE_TIMELINE")
    endif()
    foreach(pair IN LISTS all_targets)
      string(REPLACE "=" ";" pair "${pair}")
      list(GET pair 0 t)
      list(LENGTH pair len)
      if(t STREQUAL target)
        add_executable(${t} ${sources})
      else()
        add_executable(${t} EXCLUDE_FROM_ALL ${sources})
        list(GET pair 1 define)
        target_compile_definitions(${t} PRIVATE ${define})
      endif()
      target_include_directories(${t} PRIVATE "${PROJECT_SOURCE_DIR}/common")
      # The one source of the lesson's minimum and its name: the program's
      # gate and report read them (course/cli.cuh), as the page, the README
      # and this build do.
      target_compile_definitions(${t} PRIVATE COURSE_MIN_CC=${min} COURSE_LESSON=${target})
      target_compile_options(${t} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${COURSE_CUDA_OPTIONS}>)
      target_link_libraries(${t} PRIVATE CUDA::cudart)
      foreach(lib IN LISTS L_LIBRARIES)
        target_link_libraries(${t} PRIVATE CUDA::${lib})
      endforeach()
      set_target_properties(${t} PROPERTIES
        CUDA_ARCHITECTURES "${archs}"
        CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF
        RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bin")
    endforeach()

    if(L_NVBENCH)
      _course_nvbench_target(${target} "${dir}/${L_NVBENCH}" "${dir}" "${archs}" "${min}" "${L_LIBRARIES}")
    endif()

    # The small run. Where no suitable GPU exists the program says why and
    # exits 2, which CTest reports as skipped, never as passed. It leaves a
    # stamp when it really ran, for the gpu-only preset's last test.
    add_test(NAME ${target}_gpu
             COMMAND sh -c "\"$0\" \"$@\" && touch \"${CMAKE_BINARY_DIR}/gpu-ran/${target}\""
                     $<TARGET_FILE:${target}> ${L_TEST_ARGS})
    set_tests_properties(${target}_gpu PROPERTIES
      LABELS gpu SKIP_RETURN_CODE ${COURSE_WAIVED_EXIT_CODE} TIMEOUT 600
      FIXTURES_REQUIRED course_gpu_run)
    # --help exits before the capability gate: the binary was built and
    # starts, on any machine. A bad command line is refused with exit 64,
    # also before the gate.
    add_test(NAME ${target}_starts COMMAND ${target} --help)
    add_test(NAME ${target}_bad_args
             COMMAND sh -c "for a in ' -1' '+5' 18446744073709551616; do \"$0\" --size \"$a\"; [ $? -eq 64 ] || exit 1; done; for f in --help=1 --quick=yes --profile= -h=0; do \"$0\" \"$f\"; [ $? -eq 64 ] || exit 1; done; \"$0\" --samples 2147483648; [ $? -eq 64 ] || exit 1; \"$0\" --json /dev/full; [ $? -eq 64 ]"
                     $<TARGET_FILE:${target}>)
    # A --size no GPU could hold (past the lesson's maxSize, or buffers over
    # course/cli.cuh's kMaxDeviceBytes, or bytes past size_t) is a bad
    # command line on every machine: refused before the capability gate,
    # which would otherwise answer it on a machine without a GPU with exit
    # 2, waived, and hide the mistake. One line says why, the usage line
    # follows, and nothing is printed on stdout.
    add_test(NAME ${target}_huge_size
             COMMAND sh -c "for a in 999999999999999 18446744073709551615; do e=$(\"$0\" --size \"$a\" 2>&1 >/dev/null); rc=$?; o=$(\"$0\" --size \"$a\" 2>/dev/null); [ $rc -eq 64 ] && [ -z \"$o\" ] && [ $(printf '%s\\n' \"$e\" | wc -l) -eq 2 ] && printf '%s\\n' \"$e\" | head -n 1 | grep -q -- \"--size $a is above\" && printf '%s\\n' \"$e\" | tail -n 1 | grep -q '^usage: ' || { echo \"--size $a: exit $rc, stderr: $e\"; exit 1; }; done"
                     $<TARGET_FILE:${target}>)
    set_tests_properties(${target}_starts ${target}_bad_args ${target}_huge_size PROPERTIES LABELS cpu)
  endif()

  # What the manifest says about this day (one JSON object). The tools
  # write the page's compile-alone command from it (the course's
  # architectures, COURSE_CUDA_OPTIONS, the libraries): the program the
  # evidence measured, whatever this build's architectures.
  set(json "{}")
  string(JSON json SET "${json}" target "\"${target}\"")
  string(JSON json SET "${json}" day "${L_DAY}")
  string(JSON json SET "${json}" topic "\"${L_TOPIC}\"")
  string(JSON json SET "${json}" dir "\"${rel_dir}\"")
  string(JSON json SET "${json}" min_cc "\"${L_MIN_CC}\"")
  _course_json_list(srcs_json "${rel_sources}")
  _course_json_list(libs_json "${L_LIBRARIES}")
  string(JSON json SET "${json}" libraries "${libs_json}")
  if(L_NVBENCH AND TARGET ${target}_nvbench)
    string(JSON json SET "${json}" nvbench_target "\"${target}_nvbench\"")
  elseif(L_NVBENCH)
    string(JSON json SET "${json}" nvbench_left_out "\"nvbench was not found (COURSE_NVBENCH_DIR)\"")
  endif()
  string(JSON json SET "${json}" sources "${srcs_json}")
  string(JSON json SET "${json}" header "\"common/course.cuh\"")
  if(built)
    string(JSON json SET "${json}" built true)
  else()
    string(JSON json SET "${json}" built false)
  endif()
  _course_json_list(archs_json "${archs}")
  string(JSON json SET "${json}" architectures "${archs_json}")
  _course_json_list(archs_json "${course_archs}")
  string(JSON json SET "${json}" course_architectures "${archs_json}")
  string(JSON json SET "${json}" binary "\"${CMAKE_BINARY_DIR}/bin/${target}\"")
  string(JSON json SET "${json}" build_command "\"cmake --build build --target ${target}\"")
  string(JSON json SET "${json}" run_command "\"build/bin/${target}\"")
  _course_json_list(args_json "${L_TEST_ARGS}")
  string(JSON json SET "${json}" test_args "${args_json}")
  _course_json_list(variants_json "${variant_targets}")
  string(JSON json SET "${json}" variants "${variants_json}")
  if(L_TIMELINE)
    string(JSON json SET "${json}" timeline_target "\"${L_TIMELINE}\"")
  endif()
  set_property(GLOBAL APPEND PROPERTY COURSE_LESSONS "${json}")
endfunction()

# What a lesson's timed build compiles with beyond the course's own flags,
# read once every CMakeLists.txt has been processed: the target's
# definitions and options, its sources' own, and CUDA flags its folder
# sets apart from the top level's. The sources digest cannot see a -D, so
# `evidence verify` refuses a promoted record for a lesson whose timed
# build has any of these (variants carry their defines in other targets).
function(_course_extra_flags out lesson_json)
  string(JSON target GET "${lesson_json}" target)
  string(JSON dir GET "${lesson_json}" dir)
  set(extras "")
  if(NOT TARGET ${target})
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  get_target_property(defs ${target} COMPILE_DEFINITIONS)
  string(JSON min_cc GET "${lesson_json}" min_cc)
  string(REPLACE "." "" min_cc "${min_cc}")
  list(REMOVE_ITEM defs "COURSE_MIN_CC=${min_cc}" "COURSE_LESSON=${target}")  # the course's own
  if(defs)
    list(TRANSFORM defs PREPEND "-D")
    list(APPEND extras ${defs})
  endif()
  get_target_property(opts ${target} COMPILE_OPTIONS)
  if(opts)
    set(course_opts "$<$<COMPILE_LANGUAGE:CUDA>:${COURSE_CUDA_OPTIONS}>")  # as course_add_lesson adds them
    list(REMOVE_ITEM opts ${course_opts})
    list(APPEND extras ${opts})
  endif()
  get_target_property(srcs ${target} SOURCES)
  foreach(src IN LISTS srcs)
    foreach(prop COMPILE_DEFINITIONS COMPILE_OPTIONS COMPILE_FLAGS)
      get_source_file_property(v "${src}" TARGET_DIRECTORY ${target} ${prop})
      if(v)
        list(APPEND extras "${src}:${prop}=${v}")
      endif()
    endforeach()
  endforeach()
  # What links or launches the compiler: an extra source, a linker option
  # (--wrap), a library beyond the runtime, a compiler launcher.
  string(JSON n LENGTH "${lesson_json}" sources)
  set(declared "")
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON src GET "${lesson_json}" sources ${i})
    list(APPEND declared "${CMAKE_SOURCE_DIR}/${src}")
  endforeach()
  foreach(src IN LISTS srcs)
    get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_SOURCE_DIR}/${dir}")
    if(NOT abs IN_LIST declared)
      list(APPEND extras "source ${src}")
    endif()
  endforeach()
  foreach(prop LINK_OPTIONS LINK_FLAGS CUDA_COMPILER_LAUNCHER CXX_COMPILER_LAUNCHER LINK_DEPENDS
               INTERFACE_LINK_LIBRARIES PRECOMPILE_HEADERS)
    get_target_property(v ${target} ${prop})
    if(v)
      list(APPEND extras "${prop}=${v}")
    endif()
  endforeach()
  get_target_property(libs ${target} LINK_LIBRARIES)
  list(REMOVE_ITEM libs CUDA::cudart)
  string(JSON n_libs LENGTH "${lesson_json}" libraries)
  if(n_libs GREATER 0)
    math(EXPR last_lib "${n_libs} - 1")
    foreach(i RANGE ${last_lib})
      string(JSON lib GET "${lesson_json}" libraries ${i})
      list(REMOVE_ITEM libs CUDA::${lib})  # declared in LIBRARIES: the toolkit's own
    endforeach()
  endif()
  if(libs)
    list(APPEND extras "LINK_LIBRARIES=${libs}")
  endif()
  foreach(var CMAKE_CUDA_FLAGS CMAKE_CUDA_FLAGS_RELEASE CMAKE_CUDA_FLAGS_DEBUG CMAKE_CUDA_FLAGS_RELWITHDEBINFO
              CMAKE_EXE_LINKER_FLAGS CMAKE_CUDA_COMPILE_OBJECT CMAKE_CUDA_LINK_EXECUTABLE
              CMAKE_CUDA_COMPILER_LAUNCHER CMAKE_CUDA_STANDARD_INCLUDE_DIRECTORIES)
    get_directory_property(v DIRECTORY "${CMAKE_SOURCE_DIR}/${dir}" DEFINITION ${var})
    if(NOT "${v}" STREQUAL "${${var}}")
      list(APPEND extras "${var}=${v}")
    endif()
  endforeach()
  string(REPLACE "\"" "'" extras "${extras}")
  set(${out} "${extras}" PARENT_SCOPE)
endfunction()

# nvbench, NVIDIA's benchmark library, as the course's second harness: its
# C++ library, headers and CMake package ship in the cuda-bench wheel on
# PyPI (cuda/bench/cu13/nvbench/, pinned in tools/requirements.txt). Its
# CMake package asks for CMake 3.30, newer than the course needs, so the
# library is imported here from the folder: COURSE_NVBENCH_DIR, found in the
# tools' venv where it is not given. libnvbench.so links the driver's NVML
# (libnvidia-ml.so.1), which only a machine with a GPU driver has: the link
# leaves it to the loader (--allow-shlib-undefined), so the benchmarks also
# build on a machine without one.
set(COURSE_NVBENCH_DIR "" CACHE PATH "cuda-bench's cuda/bench/cu13/nvbench folder (found in the tools' venv if empty)")
function(_course_find_nvbench out)
  set(dir "${COURSE_NVBENCH_DIR}")
  if(NOT dir AND DEFINED ENV{COURSE_NVBENCH_DIR})
    set(dir "$ENV{COURSE_NVBENCH_DIR}")  # a GPU machine without the venv: the wheel unpacked
  endif()
  if(NOT dir)
    file(GLOB found "${COURSE_VENV}/lib/python3*/site-packages/cuda/bench/cu13/nvbench")
    if(found)
      list(SORT found)
      list(GET found 0 dir)
    endif()
  endif()
  if(dir AND EXISTS "${dir}/include/nvbench/nvbench.cuh" AND EXISTS "${dir}/lib/libnvbench.so")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# <target>_nvbench: the lesson's `bench` file, which includes the lesson's
# own source (its kernels and launchers; its main renamed, as nvbench has
# its own) and declares the benchmarks. Built for the lesson's
# architectures, with the lesson's definitions, on request only.
function(_course_nvbench_target target bench dir archs min libs)
  _course_find_nvbench(nvbench)
  if(NOT nvbench)
    message(STATUS "course: ${target}_nvbench left out: nvbench not found (pip install the pinned cuda-bench, "
                   "or set COURSE_NVBENCH_DIR)")
    return()
  endif()
  add_executable(${target}_nvbench EXCLUDE_FROM_ALL "${bench}")
  target_include_directories(${target}_nvbench PRIVATE "${PROJECT_SOURCE_DIR}/common" "${dir}")
  target_include_directories(${target}_nvbench SYSTEM PRIVATE "${nvbench}/include")
  target_compile_definitions(${target}_nvbench PRIVATE COURSE_MIN_CC=${min} COURSE_LESSON=${target})
  target_compile_options(${target}_nvbench PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${COURSE_CUDA_OPTIONS}>)
  target_link_libraries(${target}_nvbench PRIVATE "${nvbench}/lib/libnvbench.so" CUDA::cudart CUDA::cuda_driver)
  foreach(lib IN LISTS libs)
    target_link_libraries(${target}_nvbench PRIVATE CUDA::${lib})
  endforeach()
  target_link_options(${target}_nvbench PRIVATE "LINKER:--allow-shlib-undefined" "LINKER:-rpath,${nvbench}/lib")
  set_target_properties(${target}_nvbench PROPERTIES
    CUDA_ARCHITECTURES "${archs}" CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF
    RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bin")
  if(NOT TARGET course_nvbench)
    add_custom_target(course_nvbench)
  endif()
  add_dependencies(course_nvbench ${target}_nvbench)
endfunction()

# Writes build/course-manifest.json: every day, as declared above.
function(course_write_manifest)
  get_property(lessons GLOBAL PROPERTY COURSE_LESSONS)
  get_property(left_out GLOBAL PROPERTY COURSE_LEFT_OUT)
  if(left_out)
    string(JOIN ", " names ${left_out})
    message(STATUS "course: left out of this build (their GPUs are newer than CMAKE_CUDA_ARCHITECTURES): ${names}")
  endif()
  set(out "{\"cuda_architectures\": \"${COURSE_USER_ARCHITECTURES}\", \"nvcc_version\": \"${CMAKE_CUDA_COMPILER_VERSION}\", \"waived_exit_code\": ${COURSE_WAIVED_EXIT_CODE}, \"lessons\": [")
  set(sep "")
  foreach(l IN LISTS lessons)
    _course_extra_flags(extras "${l}")
    _course_json_list(extras_json "${extras}")
    string(JSON l SET "${l}" extra_flags "${extras_json}")
    string(APPEND out "${sep}\n  ${l}")
    set(sep ",")
  endforeach()
  string(APPEND out "\n]}\n")
  file(WRITE "${CMAKE_BINARY_DIR}/course-manifest.json.tmp" "${out}")
  file(RENAME "${CMAKE_BINARY_DIR}/course-manifest.json.tmp" "${CMAKE_BINARY_DIR}/course-manifest.json")
endfunction()

# The fixture around the GPU tests: clear the stamps first; with
# COURSE_REQUIRE_GPU (the gpu-only preset, for a machine that has a GPU),
# fail at the end when no GPU test really ran.
function(course_gpu_fixture)
  add_test(NAME course_gpu_setup
           COMMAND sh -c "rm -rf \"$0\" && mkdir -p \"$0\"" "${CMAKE_BINARY_DIR}/gpu-ran")
  set_tests_properties(course_gpu_setup PROPERTIES LABELS "gpu;cpu" FIXTURES_SETUP course_gpu_run)
  if(COURSE_REQUIRE_GPU)
    add_test(NAME course_gpu_tests_ran
             COMMAND sh -c "ls -A \"$0\" | grep -q . || { echo 'every GPU test was skipped: no GPU ran any lesson' >&2; exit 1; }"
                     "${CMAKE_BINARY_DIR}/gpu-ran")
    set_tests_properties(course_gpu_tests_ran PROPERTIES LABELS gpu FIXTURES_CLEANUP course_gpu_run)
  endif()
endfunction()
