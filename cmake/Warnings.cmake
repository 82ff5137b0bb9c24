# gnnjit_warnings: the warning set every project target compiles with.
add_library(gnnjit_warnings INTERFACE)
target_compile_options(gnnjit_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
  -Wnon-virtual-dtor -Wimplicit-fallthrough)
if(GNNJIT_WERROR)
  target_compile_options(gnnjit_warnings INTERFACE -Werror)
endif()

# gnnjit_add_library(NAME SOURCES... DEPS ...): a folder library with the
# project's include root and warnings.
function(gnnjit_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE gnnjit_warnings)
endfunction()
