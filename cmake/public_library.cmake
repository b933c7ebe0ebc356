# The library users install: the same object files as the in-tree
# `ringkernel` target, linked again with a version script that exports the
# public API (rk_*) and hides the internal rk__* functions. The in-tree
# library keeps every symbol because the tests call internals; the link is
# the only extra cost, nothing is compiled twice.
# Object libraries a component attached to `ringkernel` (embedded headers and
# templates) are not among its own objects: take them from its sources.
get_target_property(rk_sources ringkernel SOURCES)
set(rk_attached_objects "")
foreach(source ${rk_sources})
  if(source MATCHES "^\\$<TARGET_OBJECTS:")
    list(APPEND rk_attached_objects ${source})
  endif()
endforeach()
add_library(ringkernel_public SHARED $<TARGET_OBJECTS:ringkernel> ${rk_attached_objects})
set_target_properties(ringkernel_public PROPERTIES
  OUTPUT_NAME ringkernel EXPORT_NAME ringkernel VERSION ${PROJECT_VERSION} SOVERSION 0
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/public
  LINK_DEPENDS ${CMAKE_SOURCE_DIR}/cmake/public_symbols.map)
target_include_directories(ringkernel_public
  PUBLIC $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(ringkernel_public PRIVATE Threads::Threads PkgConfig::FFI ${CMAKE_DL_LIBS} m)
target_link_options(ringkernel_public PRIVATE -Wl,--version-script=${CMAKE_SOURCE_DIR}/cmake/public_symbols.map
  $<TARGET_PROPERTY:ringkernel,LINK_OPTIONS>)
