# The install/package test, included by tests/CMakeLists.txt. It checks that `cmake --install`
# produces a package an outside project can use: tests/package is such a project
# (find_package(boreal), links boreal::operators; a second program links boreal::transport).
# Eight ctest tests, chained by fixtures so that `ctest -R package.run` (or any of the later
# ones) runs the whole chain in order:
#
#   package.clean    empties the scratch prefix and the consumer's build dir, so that files
#                    left by an earlier run cannot hide a file the install no longer provides
#   package.install  cmake --install <this build> --prefix <scratch prefix>
#   package.build    configures and builds the consumer against that prefix only
#   package.run      runs it and compares its checksum line with the known value
#   package.transport  runs the program that links boreal::transport (COMPONENTS transport)
#   package.embed    runs the embedding example (apps/examples/embed.cpp, built by the
#                    consumer project from the source tree) and checks its self-checked summary
#   package.embed_csv  runs the second one (apps/examples/embed_csv.cpp) on its input file and
#                    compares its CSV output, row by row
#   package.no_libfabric  uses the same install where pkg-config cannot find libfabric
#                    (tests/package/NoLibfabric.cmake): COMPONENTS operators and transport
#                    configure, build and run, and a fabric medium asked for where libfabric
#                    cannot be opened fails with an error that says so
#
# package.install installs what the default target built, so build everything first
# (`ninja -C <build>`, then `ctest -R package`).
set(_package_dir ${CMAKE_CURRENT_BINARY_DIR}/package)
set(_package_prefix ${_package_dir}/prefix)
set(_package_build ${_package_dir}/consumer)

add_test(NAME package.clean
         COMMAND ${CMAKE_COMMAND} -E rm -rf ${_package_prefix} ${_package_build})
set_tests_properties(package.clean PROPERTIES FIXTURES_SETUP boreal_package_clean)

add_test(NAME package.install
         COMMAND ${CMAKE_COMMAND} --install ${PROJECT_BINARY_DIR} --config $<CONFIG>
                 --prefix ${_package_prefix})
set_tests_properties(package.install PROPERTIES FIXTURES_REQUIRED boreal_package_clean
                                                FIXTURES_SETUP boreal_package_installed)

# The consumer is built with the same compiler and build type. A sanitized boreal needs the
# sanitizer runtime at link time, which a static library cannot carry, so the consumer is
# built with the same -fsanitize flags.
set(_consumer_options
    -DCMAKE_PREFIX_PATH=${_package_prefix}
    -DBOREAL_EXPECTED_DIR=${_package_prefix}/${CMAKE_INSTALL_LIBDIR}/cmake/boreal
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
    -DCMAKE_BUILD_TYPE=$<CONFIG>
    -DBOREAL_EMBED_EXAMPLE=${PROJECT_SOURCE_DIR}/apps/examples/embed.cpp
    -DBOREAL_EMBED_CSV_EXAMPLE=${PROJECT_SOURCE_DIR}/apps/examples/embed_csv.cpp)
if(BOREAL_SANITIZE)
  string(REPLACE ";" "," _package_san "${BOREAL_SANITIZE}")
  list(APPEND _consumer_options -DCMAKE_CXX_FLAGS=-fsanitize=${_package_san}
                                -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${_package_san})
endif()
add_test(NAME package.build
         COMMAND ${CMAKE_CTEST_COMMAND} --build-and-test ${CMAKE_CURRENT_LIST_DIR} ${_package_build}
                 --build-generator ${CMAKE_GENERATOR}
                 --build-makeprogram ${CMAKE_MAKE_PROGRAM}
                 --build-options ${_consumer_options})
set_tests_properties(package.build PROPERTIES FIXTURES_REQUIRED boreal_package_installed
                                              FIXTURES_SETUP boreal_package_built)

# PASS_REGULAR_EXPRESSION ignores the exit code; the consumer prints this line only after every
# one of its checks passed. The values are computed independently of boreal's code: the schema
# hash is FNV-1a 64 of the canonical text, the payload hash that of the 100 rows laid out as
# schema.hpp specifies (40-byte rows, little-endian values, NUL-padded strings).
# (Started through `cmake -E env` because ctest would otherwise look for the executable, and
# warn about it, whenever it lists tests before package.build has run.)
add_test(NAME package.run COMMAND ${CMAKE_COMMAND} -E env ${_package_build}/consumer)
set_tests_properties(package.run PROPERTIES
  FIXTURES_REQUIRED boreal_package_built
  PASS_REGULAR_EXPRESSION
    "consumer: rows=100 tuple_bytes=40 schema_hash=e958737c35b612e9 seq=4950 ts=4950 price=1237\\.50 ok=34 sym_bytes=290 payload_fnv=3fb6a7ab41c8b90a\n")

# The example checks its own result (the windows' counts add up to the rows that passed the
# filter, counted from the generator directly) and prints "ok" only then; the numbers pin the
# generator's output for its seed (10,000 rows, 5,023 with price > 50, 8 keys x 2 windows).
add_test(NAME package.embed COMMAND ${CMAKE_COMMAND} -E env ${_package_build}/embed)
set_tests_properties(package.embed PROPERTIES
  FIXTURES_REQUIRED boreal_package_built
  PASS_REGULAR_EXPRESSION "embed: generated=10000 passed=5023 windows=16 counted=5023 ok\n")

# The standard check value of CRC-32C ("123456789"), from the algorithm's definition; and
# libfabric is not in the process (transport/src/fabric/fabric_library.hpp).
add_test(NAME package.transport COMMAND ${CMAKE_COMMAND} -E env ${_package_build}/transport_consumer)
set_tests_properties(package.transport PROPERTIES
  FIXTURES_REQUIRED boreal_package_built
  PASS_REGULAR_EXPRESSION "transport_consumer: crc32c=e3069283 libfabric=not-loaded\n")

# The example reads apps/examples/embed_csv_input.csv (20 trades over 3 s) and writes one CSV
# row per symbol and second on stdout. The expected rows are worked out by hand from the input
# (the 15 trades of >= 100 shares; embed_csv.cpp lists them too) and compared whole, in order.
string(CONCAT _embed_csv_expected
  "^sym,window_start,window_end,n,volume,high\n"
  "IBM,0,1000000000,2,300,140\\.25\n"
  "MSFT,0,1000000000,2,400,371\\.2\n"
  "AAPL,0,1000000000,1,150,189\\.75\n"
  "IBM,1000000000,2000000000,2,350,141\\.5\n"
  "MSFT,1000000000,2000000000,1,500,369\\.5\n"
  "AAPL,1000000000,2000000000,2,520,190\\.4\n"
  "IBM,2000000000,3000000000,2,400,142\\.25\n"
  "MSFT,2000000000,3000000000,2,350,373\\.5\n"
  "AAPL,2000000000,3000000000,1,100,191\n"
  "embed_csv: read 20 rows in 3 batches, wrote 9 windows\n")
add_test(NAME package.embed_csv
         COMMAND ${CMAKE_COMMAND} -E env ${_package_build}/embed_csv
                 ${PROJECT_SOURCE_DIR}/apps/examples/embed_csv_input.csv)
set_tests_properties(package.embed_csv PROPERTIES
  FIXTURES_REQUIRED boreal_package_built
  PASS_REGULAR_EXPRESSION "${_embed_csv_expected}")

set(_no_libfabric_options
    -DPREFIX=${_package_prefix}
    -DEXPECTED_DIR=${_package_prefix}/${CMAKE_INSTALL_LIBDIR}/cmake/boreal
    -DSOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}/no_libfabric
    -DWORK_DIR=${_package_dir}/no_libfabric
    -DGENERATOR=${CMAKE_GENERATOR}
    -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
    -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
    -DBUILD_TYPE=$<CONFIG>)
if(BOREAL_SANITIZE)
  list(APPEND _no_libfabric_options -DSANITIZE=${_package_san})
endif()
add_test(NAME package.no_libfabric
         COMMAND ${CMAKE_COMMAND} ${_no_libfabric_options}
                 -P ${CMAKE_CURRENT_LIST_DIR}/NoLibfabric.cmake)
set_tests_properties(package.no_libfabric PROPERTIES
  FIXTURES_REQUIRED boreal_package_installed
  PASS_REGULAR_EXPRESSION "no_libfabric: operators ok, transport ok, fabric refused\n")

set_tests_properties(package.clean package.install package.build package.run package.transport
                     package.embed package.embed_csv package.no_libfabric
                     PROPERTIES LABELS package TIMEOUT 60)
