# cmake -DFABMEM_ROOT=<source root> -DMODE=<length|comment> -P CheckSourceFiles.cmake
#
# The shape every file of src/, tools/ and bench/ keeps, so that each can be
# read whole and known by its opening:
#   length:  no file runs past 800 lines (counted as wc -l counts them), but
#            those of the list below; a listed file that is back within the
#            bound, or gone, fails too, so that the list only shrinks;
#   comment: every .c and .h file starts with a comment that says its one
#            concern (its first bytes are "/*", and the comment has words).
# Each failure names the file (and, for length, how long it is).
cmake_minimum_required(VERSION 3.25)
if(NOT FABMEM_ROOT OR NOT MODE)
  message(FATAL_ERROR "usage: cmake -DFABMEM_ROOT=<root> -DMODE=<length|comment> -P CheckSourceFiles.cmake")
endif()

set(limit 800)
# The files allowed past the bound for now: each is being cut by concern,
# and leaves this list when it is. None today; keep it that way.
set(longer_for_now)

set(broken 0)
if(MODE STREQUAL "length")
  file(GLOB_RECURSE files RELATIVE ${FABMEM_ROOT}
    ${FABMEM_ROOT}/src/* ${FABMEM_ROOT}/tools/* ${FABMEM_ROOT}/bench/*)
  foreach(f IN LISTS files)
    file(READ ${FABMEM_ROOT}/${f} text)
    string(REGEX MATCHALL "\n" newlines "${text}")
    list(LENGTH newlines n)
    if(f IN_LIST longer_for_now)
      if(n LESS_EQUAL limit)
        message(SEND_ERROR "${f} is ${n} lines, within ${limit}: drop it from the list of "
          "longer files in cmake/CheckSourceFiles.cmake")
        set(broken 1)
      endif()
    elseif(n GREATER limit)
      message(SEND_ERROR "${f} is ${n} lines, more than ${limit}: cut it by concern")
      set(broken 1)
    endif()
  endforeach()
  foreach(f IN LISTS longer_for_now)
    if(NOT EXISTS ${FABMEM_ROOT}/${f})
      message(SEND_ERROR "${f}, on the list of longer files in cmake/CheckSourceFiles.cmake, "
        "is gone: drop it from the list")
      set(broken 1)
    endif()
  endforeach()
elseif(MODE STREQUAL "comment")
  file(GLOB_RECURSE files RELATIVE ${FABMEM_ROOT}
    ${FABMEM_ROOT}/src/*.c ${FABMEM_ROOT}/src/*.h
    ${FABMEM_ROOT}/tools/*.c ${FABMEM_ROOT}/tools/*.h
    ${FABMEM_ROOT}/bench/*.c ${FABMEM_ROOT}/bench/*.h)
  foreach(f IN LISTS files)
    file(READ ${FABMEM_ROOT}/${f} head LIMIT 65536)
    string(FIND "${head}" "*/" close)
    if(NOT head MATCHES "^/\\*")
      message(SEND_ERROR "${f} does not start with a comment saying its concern")
      set(broken 1)
    elseif(close EQUAL -1)
      message(SEND_ERROR "${f}: its first comment does not end within 64 KiB")
      set(broken 1)
    else()
      math(EXPR len "${close} - 2")
      string(SUBSTRING "${head}" 2 ${len} first)
      if(NOT first MATCHES "[A-Za-z][A-Za-z]+[^A-Za-z]+[A-Za-z][A-Za-z]+")
        message(SEND_ERROR "${f}: its first comment says nothing (it should say the file's concern)")
        set(broken 1)
      endif()
    endif()
  endforeach()
else()
  message(FATAL_ERROR "MODE is length or comment, not \"${MODE}\"")
endif()
if(broken)
  message(FATAL_ERROR "files of src/, tools/ or bench/ break the shape (cmake/CheckSourceFiles.cmake)")
endif()
