# The tools' Python environment: configure makes build/venv and installs
# tools/requirements.lock into it (pinned: Jinja2, pytest, hypothesis,
# clang-format, MkDocs, cuobjdump, cuda-bench's nvbench). Included before the
# lessons are declared, so that a lesson's nvbench target finds nvbench in
# it on the first configure.

find_package(Python3 3.9 REQUIRED COMPONENTS Interpreter)

set(COURSE_VENV "${CMAKE_BINARY_DIR}/venv" CACHE PATH
    "The tools' Python environment (another build's may be shared: the arch86_course test does)")
set(COURSE_PYTHON "${COURSE_VENV}/bin/python")
set(lock "${PROJECT_SOURCE_DIR}/tools/requirements.lock")
file(SHA256 "${lock}" lock_hash)
if(NOT EXISTS "${COURSE_VENV}/.installed-${lock_hash}")
  message(STATUS "course: creating ${COURSE_VENV} from tools/requirements.lock (first configure only)")
  execute_process(COMMAND "${Python3_EXECUTABLE}" -m venv "${COURSE_VENV}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "course: python3 -m venv failed (${rc}); on Debian: apt-get install python3-venv")
  endif()
  execute_process(COMMAND "${COURSE_PYTHON}" -m pip install --quiet --disable-pip-version-check
                          -r "${lock}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "course: installing tools/requirements.lock into ${COURSE_VENV} failed (${rc})")
  endif()
  file(GLOB old "${COURSE_VENV}/.installed-*")
  if(old)
    file(REMOVE ${old})
  endif()
  file(TOUCH "${COURSE_VENV}/.installed-${lock_hash}")
endif()

