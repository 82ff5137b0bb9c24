#include "dsl/Layer.h"

#include "dsl/IRVisitor.h"
#include "dsl/Printer.h"

#include <fmt/format.h>

namespace gnnjit::dsl {

InputPtr Layer::findInput(std::string_view name) const {
  for (const InputPtr &in : inputs_)
    if (in->name == name)
      return in;
  return nullptr;
}

std::string Layer::print() const {
  std::string text = fmt::format("layer {}\n", name_);
  for (const InputPtr &in : inputs_)
    text += fmt::format("  {} {} : {} {}\n", inputKindName(in->kind), in->name, shapeText(in->shape),
                        dtypeName(in->dtype));
  Printer printer;
  std::vector<ExprPtr> roots;
  for (const LayerOutput &out : outputs_)
    roots.push_back(out.value);
  for (const std::string &line : printer.define(roots))
    text += "  " + line + "\n";
  for (const LayerOutput &out : outputs_)
    text += fmt::format("  output {} = {}\n", out.name, printer.name(out.value.get()));
  return text;
}

uint64_t Layer::hash() const {
  uint64_t h = 0xcbf29ce484222325ull; // FNV-1a 64
  for (unsigned char c : print()) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

bool Layer::dropsAttention() const {
  std::vector<ExprPtr> roots;
  for (const LayerOutput &out : outputs_)
    roots.push_back(out.value);
  for (const ExprPtr &n : postOrder(roots))
    if (const auto *g = llvm::dyn_cast<GraphValue>(n.get()); g && g->quantity() == GraphQuantity::AttentionDropout)
      return true;
  return false;
}

Layer Layer::withOutputs(std::vector<LayerOutput> outputs) const {
  Layer copy = *this;
  copy.outputs_ = std::move(outputs);
  return copy;
}

std::string Layer::hashHex() const { return fmt::format("{:016x}", hash()); }

} // namespace gnnjit::dsl
