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

# libringkernel.a (RK_STATIC, on by default: the objects are already built,
# so it costs one partial link). The archive holds a single relocatable
# object, the same objects linked with `cc -r`, in which objcopy makes every
# global symbol but the public API (rk_*) local: a static consumer sees what
# a shared one sees, and the internal rk__* names cannot clash with its own.
# What the library loads at run time (the C compiler for CPU handlers, Dawn,
# libcuda and NVRTC, all through dlopen) works the same from a static link;
# only MPI channels need the shared library (the MPI plugin links against
# libringkernel.so, so a static program's rk_mpi_* return RK_UNSUPPORTED).
option(RK_STATIC "Also build and install the static library libringkernel.a" ON)
if(RK_STATIC)
  set(rk_static_dir ${CMAKE_BINARY_DIR}/public/static)
  set(rk_static_object ${rk_static_dir}/ringkernel_all.o)
  if(CMAKE_OBJCOPY)
    set(rk_localize COMMAND ${CMAKE_OBJCOPY} --wildcard "--keep-global-symbol=rk_[!_]*"
      ${rk_static_object}.tmp ${rk_static_object})
  else()
    message(WARNING "ringkernel: no objcopy; libringkernel.a keeps its internal symbols global")
    set(rk_localize COMMAND ${CMAKE_COMMAND} -E rename ${rk_static_object}.tmp ${rk_static_object})
  endif()
  add_custom_command(OUTPUT ${rk_static_object}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${rk_static_dir}
    COMMAND ${CMAKE_C_COMPILER} -r -nostdlib -o ${rk_static_object}.tmp
      $<TARGET_OBJECTS:ringkernel> ${rk_attached_objects}
    ${rk_localize}
    COMMAND ${CMAKE_COMMAND} -E rm -f ${rk_static_object}.tmp
    DEPENDS ringkernel $<TARGET_OBJECTS:ringkernel> ${rk_attached_objects}
    COMMENT "Linking the objects of libringkernel.a, public API only"
    COMMAND_EXPAND_LISTS VERBATIM)
  set_source_files_properties(${rk_static_object} PROPERTIES EXTERNAL_OBJECT ON GENERATED ON)
  add_library(ringkernel_static STATIC ${rk_static_object})
  set_target_properties(ringkernel_static PROPERTIES
    OUTPUT_NAME ringkernel EXPORT_NAME ringkernel_static LINKER_LANGUAGE C
    ARCHIVE_OUTPUT_DIRECTORY ${rk_static_dir})
  target_include_directories(ringkernel_static
    PUBLIC $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # What a program linking the archive also links (ringkernelConfig.cmake
  # defines ringkernel::libffi for installed consumers).
  target_link_libraries(ringkernel_static INTERFACE Threads::Threads
    $<BUILD_INTERFACE:PkgConfig::FFI> $<INSTALL_INTERFACE:ringkernel::libffi> ${CMAKE_DL_LIBS} m)
endif()
