# Shared compile settings and helpers for boreal's targets.

# boreal_set_warnings(target): the warning set every boreal target builds with.
function(boreal_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion -Wnon-virtual-dtor)
  if(BOREAL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(BOREAL_SANITIZE)
    string(REPLACE ";" "," _san "${BOREAL_SANITIZE}")
    target_compile_options(${target} PRIVATE -fsanitize=${_san} -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${_san})
  endif()
endfunction()

# boreal_add_test(NAME SOURCES... LIBS ... [TIMEOUT s] [RESOURCE_LOCK name]): one GoogleTest
# executable, registered with ctest; tests holding the same lock never run at once.
function(boreal_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;RESOURCE_LOCK" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  boreal_set_warnings(${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set(_props TIMEOUT ${ARG_TIMEOUT})
  if(ARG_RESOURCE_LOCK)
    list(APPEND _props RESOURCE_LOCK ${ARG_RESOURCE_LOCK})
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 30 PROPERTIES ${_props})
endfunction()

# boreal_add_bench(NAME SOURCES... LIBS ...): one Google Benchmark executable.
function(boreal_add_bench name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} benchmark::benchmark benchmark::benchmark_main)
  boreal_set_warnings(${name})
endfunction()
