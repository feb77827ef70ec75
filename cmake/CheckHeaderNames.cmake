# cmake -DFABMEM_ROOT=<source root> -P CheckHeaderNames.cmake
#
# Fails, naming them, when two headers of include/, src/ or tools/ share a
# base name: a reader who meets "ipc.h" should know which one it is.
cmake_minimum_required(VERSION 3.25)
file(GLOB_RECURSE headers RELATIVE ${FABMEM_ROOT}
  ${FABMEM_ROOT}/include/*.h ${FABMEM_ROOT}/src/*.h ${FABMEM_ROOT}/tools/*.h)
set(broken 0)
set(seen "")
foreach(h IN LISTS headers)
  get_filename_component(base ${h} NAME)
  string(MAKE_C_IDENTIFIER "${base}" id)
  if(DEFINED first_${id})
    message(SEND_ERROR "${h} and ${first_${id}} share the base name ${base}")
    set(broken 1)
  else()
    set(first_${id} ${h})
  endif()
endforeach()
if(broken)
  message(FATAL_ERROR "headers share base names")
endif()
