# cmake -DOUTPUT=<file.cpp> -DHEADER_DIR=<dir> -DHEADERS=<a.cuh|b.cuh> -P EmbedDeviceHeaders.cmake
# Writes a C++ file holding each header's exact bytes as "gnnjit/<name>",
# sorted by name, for codegen/DeviceHeaders.cpp. Hex escapes keep any byte
# intact (no raw-string delimiter can clash with the text).
string(REPLACE "|" ";" headers "${HEADERS}")
list(SORT headers)
string(REPEAT "." 96 chunk) # 48 bytes per source line

set(arrays "")
set(entries "")
set(index 0)
foreach(header IN LISTS headers)
  file(READ "${HEADER_DIR}/${header}" hex HEX)
  string(REGEX REPLACE "(${chunk})" "\\1\n" hex "${hex}")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" hex "${hex}")
  string(REGEX REPLACE "\n$" "" hex "${hex}")
  string(REPLACE "\n" "\"\n    \"" hex "${hex}")
  string(APPEND arrays "// ${header}\nconstexpr char kText${index}[] =\n    \"${hex}\";\n")
  string(APPEND entries "    {\"gnnjit/${header}\", {kText${index}, sizeof kText${index} - 1}},\n")
  math(EXPR index "${index} + 1")
endforeach()

file(WRITE "${OUTPUT}" "// Generated from codegen/device by EmbedDeviceHeaders.cmake; do not edit.
#include \"codegen/DeviceHeaders.h\"

#include <cstddef>

namespace gnnjit::codegen::embedded {
namespace {
${arrays}} // namespace

extern const DeviceHeader kDeviceHeaders[] = {
${entries}};
extern const size_t kDeviceHeaderCount = ${index};

} // namespace gnnjit::codegen::embedded
")
