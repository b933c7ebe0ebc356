# Install target, CMake package config (find_package(ringkernel)) and pkg-config file.
include(CMakePackageConfigHelpers)
install(TARGETS ringkernel_public EXPORT ringkernelTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The static library has its own export set, loaded by
# find_package(ringkernel COMPONENTS static) (ringkernelConfig.cmake).
if(RK_STATIC)
  install(TARGETS ringkernel_static EXPORT ringkernelStaticTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT ringkernelStaticTargets NAMESPACE ringkernel:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringkernel)
endif()
install(DIRECTORY include/ringkernel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Dawn (scripts/install-webgpu.sh), when this tree has it, goes to
# LIBDIR/ringkernel/, where the installed library's loader looks first
# (src/webgpu/wgpu_loader.c), so an install keeps its WebGPU backend.
set(rk_dawn_library ${CMAKE_SOURCE_DIR}/.deps/webgpu/package/libwebgpu_wrapper.so)
if(EXISTS ${rk_dawn_library})
  install(FILES ${rk_dawn_library} DESTINATION ${CMAKE_INSTALL_LIBDIR}/ringkernel)
  install(FILES ${CMAKE_SOURCE_DIR}/.deps/webgpu/package/LICENSE DESTINATION ${CMAKE_INSTALL_LIBDIR}/ringkernel
    RENAME dawn-LICENSE OPTIONAL)
endif()
install(EXPORT ringkernelTargets NAMESPACE ringkernel:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringkernel)
configure_package_config_file(cmake/ringkernelConfig.cmake.in
  ${CMAKE_BINARY_DIR}/ringkernelConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringkernel)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/ringkernelConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/ringkernelConfig.cmake ${CMAKE_BINARY_DIR}/ringkernelConfigVersion.cmake
  cmake/embed.cmake cmake/embed_file.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringkernel)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(RK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH rk_pc_up "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" rk_pc_up "${rk_pc_up}")
  set(RK_PC_PREFIX "\${pcfiledir}/${rk_pc_up}")
endif()
# Libs.private: what a static link of libringkernel.a adds (pkg-config --static).
set(RK_PC_LIBS_PRIVATE "-lpthread")
foreach(lib ${CMAKE_DL_LIBS} m)
  string(APPEND RK_PC_LIBS_PRIVATE " -l${lib}")
endforeach()
configure_file(cmake/ringkernel.pc.in ${CMAKE_BINARY_DIR}/ringkernel.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ringkernel.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
