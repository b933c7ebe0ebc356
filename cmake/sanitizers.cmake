# Sanitizer builds (RK_SANITIZE: '', 'address,undefined' or 'thread').
#  - Compiler and linker flags for every target. GCC's -fsanitize=undefined
#    leaves out float-cast-overflow (a double too large for the integer it
#    is converted to), so it is asked for by name.
#  - With ASan, the LeakSanitizer settings every test runs under: the
#    suppressions for leaks inside the GPU driver stack
#    (tests/sanitizers/lsan.supp) and a two-frame allocation stack, so that a
#    suppression matches only when the driver itself called the allocator
#    (docs/architecture.md, "Sanitizer runs", says why).
if(RK_SANITIZE)
  add_compile_options(-fsanitize=${RK_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${RK_SANITIZE})
  if(RK_SANITIZE MATCHES "undefined")
    add_compile_options(-fsanitize=float-cast-overflow)
    add_link_options(-fsanitize=float-cast-overflow)
  endif()
endif()

if(RK_SANITIZE MATCHES "address")
  # One line in LSAN_OPTIONS syntax; tests/fuzz/run-fuzz.sh reads it too.
  set(RK_LSAN_OPTIONS_FILE ${CMAKE_BINARY_DIR}/lsan_options)
  file(WRITE ${RK_LSAN_OPTIONS_FILE}
    "suppressions=${CMAKE_SOURCE_DIR}/tests/sanitizers/lsan.supp:malloc_context_size=2\n")
  # Run by CTest whenever it reads a test directory, so `ctest` by hand gets
  # the settings too. Ours come first: flags in the caller's LSAN_OPTIONS win.
  set(RK_LSAN_CTEST_SCRIPT ${CMAKE_BINARY_DIR}/lsan_options.cmake)
  file(WRITE ${RK_LSAN_CTEST_SCRIPT} "\
file(STRINGS \"${RK_LSAN_OPTIONS_FILE}\" rk_lsan_options LIMIT_COUNT 1)
string(FIND \"\$ENV{LSAN_OPTIONS}\" \"\${rk_lsan_options}\" rk_lsan_at)
if(rk_lsan_at EQUAL -1)
  if(\"\$ENV{LSAN_OPTIONS}\" STREQUAL \"\")
    set(ENV{LSAN_OPTIONS} \"\${rk_lsan_options}\")
  else()
    set(ENV{LSAN_OPTIONS} \"\${rk_lsan_options}:\$ENV{LSAN_OPTIONS}\")
  endif()
endif()
")
endif()

# rk_sanitizer_test_environment(DIR): the tests of DIR and of every directory
# below it run under the LeakSanitizer settings above (nothing without ASan).
function(rk_sanitizer_test_environment dir)
  if(NOT RK_LSAN_CTEST_SCRIPT)
    return()
  endif()
  set_property(DIRECTORY ${dir} APPEND PROPERTY TEST_INCLUDE_FILES ${RK_LSAN_CTEST_SCRIPT})
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    rk_sanitizer_test_environment(${sub})
  endforeach()
endfunction()
