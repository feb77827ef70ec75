# fab_add_test_binary(<target> PREFIX <ctest prefix> SOURCES <src...> [LIBS <libs...>])
#
# Builds a cmocka test binary and registers each of its tests as its own CTest
# case, named <prefix>.<test>: the names are read from the cmocka_unit_test(...)
# entries of the sources, so a test that is written is a test that runs. The
# binary runs one test when given its name (tests/support/fabtest.c).
pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)

set(FABMEM_TEST_LAUNCHER "")
if(FABMEM_VALGRIND)
  find_program(VALGRIND valgrind REQUIRED)
  set(FABMEM_TEST_LAUNCHER ${VALGRIND} --quiet --error-exitcode=97 --leak-check=full
      --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
      --track-origins=yes)
endif()

function(fab_add_test_binary target)
  cmake_parse_arguments(T "" "PREFIX" "SOURCES;LIBS;ENVIRONMENT;LABELS" ${ARGN})
  add_executable(${target} ${T_SOURCES})
  target_link_libraries(${target} PRIVATE fab_test_support PkgConfig::CMOCKA ${T_LIBS})
  set(names "")
  foreach(src ${T_SOURCES})
    get_filename_component(path ${src} ABSOLUTE)
    file(STRINGS ${path} lines REGEX "cmocka_unit_test(_setup_teardown|_setup|_teardown)?\\(")
    foreach(line ${lines})
      string(REGEX MATCHALL "cmocka_unit_test(_setup_teardown|_setup|_teardown)?\\([ ]*[A-Za-z_0-9]+" hits "${line}")
      foreach(hit ${hits})
        string(REGEX REPLACE ".*\\([ ]*" "" name "${hit}")
        list(APPEND names ${name})
      endforeach()
    endforeach()
  endforeach()
  if(NOT names)
    message(FATAL_ERROR "${target}: no cmocka_unit_test entries found")
  endif()
  # memcheck runs a program many times slower: the multi-process tests,
  # each of whose processes it runs, get more time under it.
  set(timeout 120)
  if(FABMEM_VALGRIND)
    set(timeout 300)
  endif()
  foreach(name ${names})
    add_test(NAME ${T_PREFIX}.${name} COMMAND ${FABMEM_TEST_LAUNCHER} $<TARGET_FILE:${target}> ${name})
    # 77: fab_test_skip (tests/support/fabtest.h), reported SKIPPED.
    set_tests_properties(${T_PREFIX}.${name} PROPERTIES TIMEOUT ${timeout} SKIP_RETURN_CODE 77
      LABELS "${T_PREFIX};${T_LABELS}"
      ENVIRONMENT "${T_ENVIRONMENT}")
  endforeach()
endfunction()
