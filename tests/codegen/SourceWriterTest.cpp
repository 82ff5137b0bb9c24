// The source writer: indentation by scope, comments, unique names, and
// byte-identical output for identical calls.
#include "codegen/SourceWriter.h"

#include "support/Error.h"

#include <doctest/doctest.h>

#include <set>

namespace gnnjit::codegen {
namespace {

std::string sampleKernel() {
  SourceWriter w;
  w.comment("y[i] = sum of x over i's row\nthen scaled");
  {
    auto kernel = w.scope("extern \"C\" __global__ void {}(const float *x, float *y, int n)", "rowsum");
    w.line("const int i = blockIdx.x * blockDim.x + threadIdx.x;");
    w.line("if (i >= n)");
    w.line("  return;");
    std::string acc = w.fresh("acc");
    w.line("float {} = 0.0f;", acc);
    {
      auto loop = w.scope("for (int k = 0; k < {}; ++k)", 4);
      w.line("{} += x[i * 4 + k];", acc);
    }
    w.blank();
    w.line("y[i] = {};", acc);
  }
  return w.str();
}

TEST_CASE("scopes indent their body and close with a brace") {
  CHECK(sampleKernel() == "// y[i] = sum of x over i's row\n"
                          "// then scaled\n"
                          "extern \"C\" __global__ void rowsum(const float *x, float *y, int n) {\n"
                          "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                          "  if (i >= n)\n"
                          "    return;\n"
                          "  float acc0 = 0.0f;\n"
                          "  for (int k = 0; k < 4; ++k) {\n"
                          "    acc0 += x[i * 4 + k];\n"
                          "  }\n"
                          "\n"
                          "  y[i] = acc0;\n"
                          "}\n");
}

TEST_CASE("the same calls give byte-identical text") { CHECK(sampleKernel() == sampleKernel()); }

TEST_CASE("custom closers, early close, multi-line text and empty comment lines") {
  SourceWriter w(4);
  {
    auto s = w.scopeClosedBy("};", "struct State");
    w.text("float max;\nfloat sum;");
    w.comment("a\n\nb");
    CHECK(w.depth() == 1);
  }
  auto early = w.scope("");
  w.line("x();");
  early.close();
  early.close(); // a second close does nothing
  CHECK(w.depth() == 0);
  CHECK(w.str() == "struct State {\n"
                   "    float max;\n"
                   "    float sum;\n"
                   "    // a\n"
                   "    //\n"
                   "    // b\n"
                   "};\n"
                   "{\n"
                   "    x();\n"
                   "}\n");
}

TEST_CASE("a moved scope closes once") {
  SourceWriter w;
  {
    auto outer = w.scope("if (a)");
    auto moved = std::move(outer);
    w.line("b();");
  }
  CHECK(w.str() == "if (a) {\n  b();\n}\n");
}

TEST_CASE("closing an outer scope before an inner one is a bug") {
  SourceWriter w;
  auto outer = w.scope("if (a)");
  auto inner = w.scope("if (b)");
  CHECK_THROWS_AS(outer.close(), InternalError);
  inner.close();
  CHECK(w.depth() == 1);
}

TEST_CASE("fresh names count per base, in call order") {
  SourceWriter w;
  CHECK(w.fresh("acc") == "acc0");
  CHECK(w.fresh("acc") == "acc1");
  CHECK(w.fresh("i") == "i0");
  CHECK(w.fresh("acc") == "acc2");
  w.resetNames();
  CHECK(w.fresh("acc") == "acc0");
}

TEST_CASE("fresh names never repeat a reserved or earlier name") {
  SourceWriter w;
  w.reserve("v1");
  CHECK(w.fresh("v") == "v0");
  CHECK(w.fresh("v") == "v2");
  // "a" + "10" and "a1" + "0" spell the same name; only one may get it.
  std::set<std::string> names;
  for (int i = 0; i < 12; ++i)
    CHECK(names.insert(w.fresh("a")).second);
  for (int i = 0; i < 3; ++i)
    CHECK(names.insert(w.fresh("a1")).second);
  CHECK(names.count("a10") == 1);
}

} // namespace
} // namespace gnnjit::codegen
