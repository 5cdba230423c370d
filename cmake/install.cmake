# Installed package: `cmake --install build --prefix P` puts the static layer libraries in P/lib, the headers
# in P/include/llmsim, the CLI in P/bin and the Python package where P's Python imports it (bindings/), and
# writes P/lib/cmake/llmsim/llmsimConfig.cmake so that a consumer writes
#     find_package(llmsim 0.1 CONFIG REQUIRED)
#     target_link_libraries(app PRIVATE llmsim::sim)      # or one layer: llmsim::spec, llmsim::perf, ...
# (as {fmt} does; tests/install is that consumer). Components: dev (libraries, headers, CMake files), cli,
# python. Nothing is written outside the prefix.
include(CMakePackageConfigHelpers)
set(LLMSIM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/llmsim
    CACHE STRING "Where `cmake --install` puts llmsimConfig.cmake (relative to the prefix)")

install(EXPORT llmsimTargets NAMESPACE llmsim:: DESTINATION ${LLMSIM_INSTALL_CMAKEDIR} COMPONENT dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/llmsimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/llmsimConfig.cmake INSTALL_DESTINATION ${LLMSIM_INSTALL_CMAKEDIR})
# 0.x: a new minor version may break the API, so only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/llmsimConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/llmsimConfig.cmake ${PROJECT_BINARY_DIR}/llmsimConfigVersion.cmake
        DESTINATION ${LLMSIM_INSTALL_CMAKEDIR} COMPONENT dev)
