# package.no_libfabric (tests/package/PackageTest.cmake), run as `cmake -D... -P`: uses the
# scratch install from a consumer that cannot find libfabric, and checks that
#   COMPONENTS operators configures, builds and runs (tests/package/no_libfabric also checks
#     that OPTIONAL_COMPONENTS transport leaves the package found without boreal::transport,
#     and the exact reason a non-required transport gives), and
#   REQUIRED COMPONENTS transport fails the configuration with a message naming libfabric.
# Prints "no_libfabric: operators ok, transport refused" only when all of that held.
foreach(_var IN ITEMS PREFIX EXPECTED_DIR SOURCE_DIR WORK_DIR GENERATOR MAKE_PROGRAM
                      CXX_COMPILER BUILD_TYPE)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "NoLibfabric.cmake needs -D${_var}=...")
  endif()
endforeach()

# Hiding libfabric: PKG_CONFIG_LIBDIR replaces pkg-config's default search path (where
# libfabric.pc is installed) with an empty directory, and nothing adds a directory back:
# PKG_CONFIG_PATH is unset, and CMAKE_PREFIX_PATH, whose entries pkg_check_modules searches
# too, is only the scratch prefix, which holds no .pc file. The consumer project checks that
# pkg-config then really finds no libfabric.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/empty-pkgconfig")
set(ENV{PKG_CONFIG_LIBDIR} "${WORK_DIR}/empty-pkgconfig")
unset(ENV{PKG_CONFIG_PATH})
unset(ENV{CMAKE_PREFIX_PATH})

set(_options
    -G "${GENERATOR}"
    "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}"
    "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
    "-DCMAKE_PREFIX_PATH=${PREFIX}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    "-DBOREAL_EXPECTED_DIR=${EXPECTED_DIR}")
if(SANITIZE)
  list(APPEND _options "-DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZE}"
                       "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE}")
endif()

# Runs a command; its exit code and its output (stdout and stderr) in _rc and _out.
function(_run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  set(_rc "${_rc}" PARENT_SCOPE)
  set(_out "${_out}" PARENT_SCOPE)
endfunction()

# COMPONENTS operators: configure, build, run.
_run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/operators" ${_options})
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "COMPONENTS operators without libfabric: configuration failed:\n${_out}")
endif()
_run(${CMAKE_COMMAND} --build "${WORK_DIR}/operators")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "COMPONENTS operators without libfabric: build failed:\n${_out}")
endif()
_run("${WORK_DIR}/operators/consumer")
if(NOT _rc EQUAL 0 OR NOT _out MATCHES "^consumer: rows=100 ")
  message(FATAL_ERROR "COMPONENTS operators without libfabric: the consumer failed "
                      "(${_rc}):\n${_out}")
endif()

# REQUIRED COMPONENTS transport: the configuration must fail, naming libfabric. CMake wraps
# the package's message to its line width, so spaces and line breaks are compared as one.
_run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/transport" ${_options}
     -DBOREAL_REQUIRE_TRANSPORT=ON)
string(REGEX REPLACE "[ \n]+" " " _flat "${_out}")
string(CONCAT _expected "boreal component 'transport' is not available: it needs libfabric, "
                        "and pkg-config cannot find libfabric.pc")
string(FIND "${_flat}" "${_expected}" _at)
if(_rc EQUAL 0 OR _at EQUAL -1)
  message(FATAL_ERROR "REQUIRED COMPONENTS transport without libfabric: expected the "
                      "configuration to fail with \"${_expected}\"; it exited ${_rc}:\n${_out}")
endif()
message("no_libfabric: operators ok, transport refused")
