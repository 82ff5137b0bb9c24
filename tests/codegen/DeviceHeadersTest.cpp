// The embedded device headers are exactly the files in codegen/device.
#include "codegen/DeviceHeaders.h"

#include "support/Error.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

namespace gnnjit::codegen {
namespace {

const std::filesystem::path kDeviceDir = GNNJIT_DEVICE_HEADER_DIR;

std::string readFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("every embedded header equals its file on disk") {
  REQUIRE_FALSE(deviceHeaders().empty());
  for (const DeviceHeader &header : deviceHeaders()) {
    CAPTURE(header.name);
    REQUIRE(header.name.starts_with("gnnjit/"));
    CHECK(header.text == readFile(kDeviceDir / header.name.substr(7)));
    CHECK(deviceHeader(header.name) == header.text);
  }
}

TEST_CASE("every .cuh on disk is embedded, sorted by name") {
  std::set<std::string> onDisk, embedded;
  for (const auto &entry : std::filesystem::directory_iterator(kDeviceDir))
    if (entry.path().extension() == ".cuh")
      onDisk.insert("gnnjit/" + entry.path().filename().string());
  std::string previous;
  for (const DeviceHeader &header : deviceHeaders()) {
    CHECK(previous < header.name);
    previous = header.name;
    embedded.emplace(header.name);
  }
  CHECK(embedded == onDisk);
  CHECK(embedded.count(std::string(kDeviceUmbrellaHeader)) == 1);
}

TEST_CASE("an unknown header name is a bug") { CHECK_THROWS_AS(deviceHeader("gnnjit/nope.cuh"), InternalError); }

} // namespace
} // namespace gnnjit::codegen
