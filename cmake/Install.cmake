# The installed C++ package: `cmake --install build --prefix P` puts the
# libraries (static), their headers (include/gnnjit/<folder>/...) and
# gnnjitConfig.cmake under P, so that another CMake project can
# `find_package(gnnjit CONFIG REQUIRED)` and link gnnjit::gnnjit (every
# library). examples/consumer is such a project; the tests install into a
# scratch prefix, build it and run it. The command line tool is not part of
# the package.
include(CMakePackageConfigHelpers)

get_property(_gnnjit_libraries GLOBAL PROPERTY GNNJIT_PACKAGE_LIBRARIES)
get_property(_gnnjit_folders GLOBAL PROPERTY GNNJIT_PACKAGE_FOLDERS)

# Every library, as gnnjit::gnnjit (the command line tool holds the name
# gnnjit in this tree).
add_library(gnnjit_package INTERFACE)
set_target_properties(gnnjit_package PROPERTIES EXPORT_NAME gnnjit)
target_link_libraries(gnnjit_package INTERFACE ${_gnnjit_libraries})
# LLVMSupport's link interface names shared libraries (libz3, terminfo)
# that no gnnjit code uses; a consumer's binary need not depend on them.
target_link_options(gnnjit_package INTERFACE LINKER:--as-needed)
add_library(gnnjit::gnnjit ALIAS gnnjit_package)

set(_gnnjit_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/gnnjit)
install(TARGETS ${_gnnjit_libraries} gnnjit_package gnnjit_llvm
        EXPORT gnnjitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(_folder IN LISTS _gnnjit_folders)
  file(RELATIVE_PATH _relative ${PROJECT_SOURCE_DIR} ${_folder})
  install(DIRECTORY ${_folder}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gnnjit/${_relative}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.def" PATTERN "device" EXCLUDE)
endforeach()
install(EXPORT gnnjitTargets NAMESPACE gnnjit:: DESTINATION ${_gnnjit_cmake_dir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gnnjitConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/gnnjitConfig.cmake INSTALL_DESTINATION ${_gnnjit_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gnnjitConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gnnjitConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/gnnjitConfigVersion.cmake
        DESTINATION ${_gnnjit_cmake_dir})
