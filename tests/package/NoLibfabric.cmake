# package.no_libfabric (tests/package/PackageTest.cmake), run as `cmake -D... -P`: uses the
# scratch install from a consumer whose pkg-config cannot find libfabric, and checks that
#   COMPONENTS operators transport configures and builds (tests/package/no_libfabric),
#   the operators consumer runs, and
#   the transport consumer runs without libfabric in the process, and, asked for a fabric
#     listener with BOREAL_LIBFABRIC naming a file that is not there, gets the error that
#     names the file and says how to get libfabric.
# Prints "no_libfabric: operators ok, transport ok, fabric refused" only when all of that held.
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

# COMPONENTS operators transport: configure, build; the operators consumer runs.
_run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/operators" ${_options})
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "COMPONENTS operators transport without libfabric: configuration failed:\n${_out}")
endif()
_run(${CMAKE_COMMAND} --build "${WORK_DIR}/operators")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "COMPONENTS operators transport without libfabric: build failed:\n${_out}")
endif()
_run("${WORK_DIR}/operators/consumer")
if(NOT _rc EQUAL 0 OR NOT _out MATCHES "^consumer: rows=100 ")
  message(FATAL_ERROR "COMPONENTS operators without libfabric: the consumer failed "
                      "(${_rc}):\n${_out}")
endif()

# The transport consumer: no libfabric at start; a fabric medium whose libfabric cannot be
# opened fails with the whole reason (dlopen's own words in the middle).
set(_missing "${WORK_DIR}/no-such-dir/libfabric.so.1")
_run(${CMAKE_COMMAND} -E env "BOREAL_LIBFABRIC=${_missing}"
     "${WORK_DIR}/operators/transport_consumer" fabric)
string(CONCAT _expected
       "transport_consumer: crc32c=e3069283 libfabric=not-loaded\n"
       "transport_consumer: fabric error: cannot listen on fabric://tcp;ofi_rxm/127.0.0.1:0: "
       "the fabric media need libfabric, and ${_missing} "
       "(BOREAL_LIBFABRIC) cannot be opened: ${_missing}: cannot open shared object file: No "
       "such file or directory (install libfabric, on Debian libfabric1, or set "
       "BOREAL_LIBFABRIC to the path of one)\n")
if(NOT _rc EQUAL 0 OR NOT _out STREQUAL _expected)
  message(FATAL_ERROR "COMPONENTS transport without libfabric: expected (exit 0)\n"
                      "${_expected}got (exit ${_rc})\n${_out}")
endif()
message("no_libfabric: operators ok, transport ok, fabric refused")
