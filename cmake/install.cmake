# `cmake --install` ships the library as an embedder needs it: the static libraries of every
# layer, the public headers (<prefix>/include/paddock), a CMake package
# (find_package(paddock) -> paddock::paddock) and a pkg-config file (paddock.pc). Internal
# headers (runtime/, process/, sandbox/, ...) are not shipped: the public headers never include
# them (tests/consumer builds against the installed tree to prove it).
include(CMakePackageConfigHelpers)

install(TARGETS paddock paddock_base paddock_sandbox paddock_classifier paddock_proxy paddock_net
  paddock_asio paddock_asio_headers
  EXPORT paddock-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/paddock DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/generated/${PADDOCK_IO_BACKEND}/paddock/build_config.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/paddock)

set(paddock_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/paddock)
install(EXPORT paddock-targets NAMESPACE paddock:: DESTINATION ${paddock_cmake_dir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/paddockConfig.cmake.in
  ${PROJECT_BINARY_DIR}/paddockConfig.cmake INSTALL_DESTINATION ${paddock_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/paddockConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/paddockConfig.cmake
  ${PROJECT_BINARY_DIR}/paddockConfigVersion.cmake DESTINATION ${paddock_cmake_dir})

# pkg-config: the same flags the CMake package gives (the Asio backend macros included).
get_target_property(paddock_asio_header_defs paddock_asio_headers INTERFACE_COMPILE_DEFINITIONS)
get_target_property(paddock_asio_defs paddock_asio INTERFACE_COMPILE_DEFINITIONS)
list(PREPEND paddock_asio_defs ${paddock_asio_header_defs})
list(TRANSFORM paddock_asio_defs PREPEND "-D")
list(JOIN paddock_asio_defs " " PADDOCK_PC_DEFINES)
# Relocatable: the prefix is found from the .pc file's own directory, so `cmake --install
# --prefix DIR` gives a working file wherever DIR is.
file(RELATIVE_PATH PADDOCK_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_CURRENT_LIST_DIR}/paddock.pc.in ${PROJECT_BINARY_DIR}/paddock.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/paddock.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
