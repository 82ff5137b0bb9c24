# gnnjit_warnings: the warning set every project target compiles with.
add_library(gnnjit_warnings INTERFACE)
target_compile_options(gnnjit_warnings INTERFACE
  "$<$<COMPILE_LANGUAGE:CXX>:-Wall;-Wextra;-Wpedantic;-Wshadow;-Wnon-virtual-dtor;-Wimplicit-fallthrough>"
  # nvcc: the host compiler's warnings on the host side.
  "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>")
if(GNNJIT_WERROR)
  target_compile_options(gnnjit_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>
                                                   $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings>)
endif()

# gnnjit_add_library(NAME SOURCES... DEPS ... [NO_INSTALL]): a folder library
# with the project's include root and warnings; unless NO_INSTALL, part of the
# installed package (cmake/Install.cmake), its headers under
# include/gnnjit/<folder>.
function(gnnjit_add_library name)
  cmake_parse_arguments(ARG "NO_INSTALL" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                            $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/gnnjit>)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE $<BUILD_INTERFACE:gnnjit_warnings>)
  if(NOT ARG_NO_INSTALL)
    set_property(GLOBAL APPEND PROPERTY GNNJIT_PACKAGE_LIBRARIES ${name})
    set_property(GLOBAL APPEND PROPERTY GNNJIT_PACKAGE_FOLDERS ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
endfunction()
