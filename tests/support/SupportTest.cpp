// Size arithmetic, host-memory figures and the preflight's message.
#include "support/CheckedMath.h"
#include "support/Error.h"
#include "support/HostMemory.h"
#include "support/Message.h"
#include "support/MemoryEstimate.h"

#include "UserErrorText.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <limits>
#include <string>

using namespace gnnjit;

TEST_CASE("checked products and sums name the quantity that overflows") {
  CHECK(checkedProduct({3, 4, 8}, "x") == 96);
  CHECK(checkedProduct({}, "x") == 1);
  CHECK(test::userErrorText([] { (void)checkedProduct({int64_t{1} << 40, int64_t{1} << 30}, "the bytes of input 'x'"); })
            .find("the bytes of input 'x' does not fit in 64 bits") != std::string::npos);
  CHECK(checkedSum(1, 2, "x") == 3);
  CHECK(test::userErrorText([] { (void)checkedSum(std::numeric_limits<uint64_t>::max(), 1, "the total"); })
            .find("the total does not fit") != std::string::npos);
  CHECK_FALSE(productOrNothing(uint64_t{1} << 32, uint64_t{1} << 32).has_value());
}

TEST_CASE("byte sizes parse with binary suffixes and refuse anything else") {
  CHECK(parseByteSize("1024") == 1024u);
  CHECK(parseByteSize("8G") == uint64_t{8} << 30);
  CHECK(parseByteSize("512MiB") == uint64_t{512} << 20);
  CHECK(parseByteSize("3KB") == 3072u);
  CHECK(parseByteSize("2T") == uint64_t{2} << 40);
  CHECK_FALSE(parseByteSize("lots").has_value());
  CHECK_FALSE(parseByteSize("8X").has_value());
  CHECK_FALSE(parseByteSize("").has_value());
  CHECK_FALSE(parseByteSize("99999999999T").has_value()); // would overflow
}

TEST_CASE("available host memory: a positive figure, capped by GNNJIT_HOST_MEMORY") {
  unsetenv("GNNJIT_HOST_MEMORY");
  const HostMemory free = availableHostMemory();
  CHECK(free.availableBytes > 0);
  CHECK_FALSE(free.source.empty());
  setenv("GNNJIT_HOST_MEMORY", "1M", 1);
  const HostMemory capped = availableHostMemory();
  CHECK(capped.availableBytes == 1u << 20);
  CHECK(capped.source == "GNNJIT_HOST_MEMORY=1M");
  setenv("GNNJIT_HOST_MEMORY", "1 gig", 1);
  CHECK(test::userErrorText([] { (void)availableHostMemory(); }).find("is not a size") != std::string::npos);
  unsetenv("GNNJIT_HOST_MEMORY");
}

TEST_CASE("an estimate names its largest items, the total and the limit") {
  MemoryEstimate m;
  m.add("input 'x'", uint64_t{3} << 30);
  m.add("nothing", 0); // dropped
  m.add("output 'out'", uint64_t{1} << 30);
  m.add("scratch", 1536);
  CHECK(m.items().size() == 3);
  CHECK(m.total() == (uint64_t{4} << 30) + 1536);
  CHECK(m.largest(2) == "input 'x' 3.00 GiB, output 'out' 1.00 GiB and 1 smaller item");
  CHECK_NOTHROW(requireFits(m, uint64_t{5} << 30, "host memory", "test", "This run", ""));
  const std::string e =
      test::userErrorText([&] { requireFits(m, uint64_t{2} << 30, "host memory", "a test figure", "This run", "Use less."); });
  CHECK(e == "This run needs about 4.00 GiB of host memory and 2.00 GiB is available (a test figure): input 'x' "
             "3.00 GiB, output 'out' 1.00 GiB, scratch 1.5 KiB. Use less.");
  // Totals saturate instead of wrapping.
  MemoryEstimate huge;
  huge.add("a", std::numeric_limits<uint64_t>::max());
  huge.add("b", 10);
  CHECK(huge.total() == std::numeric_limits<uint64_t>::max());
  CHECK(formatBytes(100) == "100 bytes");
  CHECK(formatBytes(uint64_t{5} << 40) == "5.00 TiB");
}

TEST_CASE("long user text is clipped in messages") {
  CHECK(clipForMessage("short") == "short");
  const std::string clipped = clipForMessage(std::string(1000, 'a') + "END", 60);
  CHECK(clipped.size() < 90);
  CHECK(clipped.find("END") != std::string::npos);
  CHECK(clipped.find("(1003 bytes)") != std::string::npos);
}
