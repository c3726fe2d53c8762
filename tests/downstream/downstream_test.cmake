# Downstream package test (ctest label `install`).
#
# This file has two roles:
#  1. included from tests/CMakeLists.txt: registers the ctest test `downstream_install`, which
#     runs this same file in script mode (cmake -P);
#  2. in script mode: installs the already-built coulomb into a fresh temporary prefix
#     (cmake --install), configures the project in this folder against it with
#     CMAKE_PREFIX_PATH=<prefix> (Ninja), builds it and runs it. The executable finds the
#     installed libcoulomb.so through the build RPATH CMake gives it (and LD_LIBRARY_PATH as a
#     fallback). The installed CLI is run too, to check its install RPATH.

if(NOT CMAKE_SCRIPT_MODE_FILE)
  # ---- role 1: register the test ----
  set(_coulomb_downstream_work ${PROJECT_BINARY_DIR}/tests/downstream-work)
  add_test(NAME downstream_install
           COMMAND ${CMAKE_COMMAND}
                   -DCOULOMB_BUILD_DIR=${PROJECT_BINARY_DIR}
                   -DDOWNSTREAM_SOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}
                   -DWORK_DIR=${_coulomb_downstream_work}
                   -DCMAKE_GENERATOR_FOR_TEST=Ninja
                   -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                   -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(downstream_install PROPERTIES LABELS install TIMEOUT 900
                       RUN_SERIAL TRUE)
  return()
endif()

# ---- role 2: cmake -P ----
foreach(var COULOMB_BUILD_DIR DOWNSTREAM_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "downstream_test.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED CMAKE_GENERATOR_FOR_TEST)
  set(CMAKE_GENERATOR_FOR_TEST Ninja)
endif()

set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run_step name)
  message(STATUS "downstream: ${name}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "downstream: step '${name}' failed (${rc}): ${ARGN}")
  endif()
endfunction()

run_step(install ${CMAKE_COMMAND} --install ${COULOMB_BUILD_DIR} --prefix ${prefix})

set(configure_args -S ${DOWNSTREAM_SOURCE_DIR} -B ${build} -G ${CMAKE_GENERATOR_FOR_TEST}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
if(CXX_COMPILER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
run_step(configure ${CMAKE_COMMAND} ${configure_args})
run_step(build ${CMAKE_COMMAND} --build ${build})

# The installed library directory (lib or lib64 or lib/<multiarch>).
file(GLOB_RECURSE libs LIST_DIRECTORIES false ${prefix}/lib*/libcoulomb.*)
set(ld_path "")
foreach(lib IN LISTS libs)
  get_filename_component(dir ${lib} DIRECTORY)
  list(APPEND ld_path ${dir})
endforeach()
list(REMOVE_DUPLICATES ld_path)
string(REPLACE ";" ":" ld_path "${ld_path}")
if(DEFINED ENV{LD_LIBRARY_PATH} AND NOT "$ENV{LD_LIBRARY_PATH}" STREQUAL "")
  set(ld_path "${ld_path}:$ENV{LD_LIBRARY_PATH}")
endif()

run_step(run ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${ld_path} ${build}/downstream)

# The installed command-line tool must start (install RPATH), without LD_LIBRARY_PATH.
if(EXISTS ${prefix}/bin/coulomb)
  run_step(cli ${prefix}/bin/coulomb --help)
endif()
message(STATUS "downstream: OK")
