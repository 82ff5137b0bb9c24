#include "graph/generate/GeneratorSpec.h"

#include "graph/generate/Generators.h"
#include "support/Error.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace gnnjit::graph {

namespace {

struct GeneratorInfo;

/// The key=value pairs of one spec, checked against the generator's keys.
class Values {
public:
  Values(const GeneratorInfo &generator, llvm::StringRef text);

  bool has(std::string_view key) const { return find(key) != nullptr; }

  /// The value of `key` parsed as T, or `fallback` when it is not given.
  template <typename T> T get(std::string_view key, T fallback) const;

private:
  struct Pair {
    std::string_view key, value;
  };
  const Pair *find(std::string_view key) const {
    for (const Pair &p : pairs_)
      if (p.key == key)
        return &p;
    return nullptr;
  }
  [[noreturn]] void badValue(const Pair &p, std::string_view expected) const;

  const GeneratorInfo &generator_;
  std::vector<Pair> pairs_;
};

struct KeyInfo {
  std::string_view name;
  std::string defaultText;
  bool inUsage = true; ///< shown in the help line's example spec
};

struct GeneratorInfo {
  std::string_view name, summary;
  std::vector<KeyInfo> keys;
  EdgeList (*run)(const Values &);

  std::string keyList() const {
    std::string out;
    for (const KeyInfo &k : keys)
      out += fmt::format("{}{}={}", out.empty() ? "" : ", ", k.name, k.defaultText);
    return out;
  }
};

template <typename T> std::string text(T value) {
  if constexpr (std::is_same_v<T, bool>)
    return value ? "1" : "0";
  else
    return fmt::format("{}", value);
}

EdgeList runRmat(const Values &v) {
  RmatParams p;
  p.scale = v.get("scale", p.scale);
  p.edgeFactor = v.get("ef", p.edgeFactor);
  p.a = v.get("a", p.a);
  p.b = v.get("b", p.b);
  p.c = v.get("c", p.c);
  p.seed = v.get("seed", p.seed);
  p.permute = v.get("permute", p.permute);
  return generateRmat(p);
}

EdgeList runGrid(const Values &v) {
  GridParams p;
  if (v.has("side") && (v.has("rows") || v.has("cols")))
    throwUserError("grid: give side (a square grid) or rows and cols, not both");
  p.rows = v.get("side", v.get("rows", p.rows));
  p.cols = v.get("side", v.get("cols", p.cols));
  return generateGrid(p);
}

EdgeList runErdosRenyi(const Values &v) {
  ErdosRenyiParams p;
  p.nodes = v.get("n", p.nodes);
  p.avgDegree = v.get("deg", p.avgDegree);
  p.seed = v.get("seed", p.seed);
  return generateErdosRenyi(p);
}

EdgeList runSbm(const Values &v) {
  SbmParams p;
  p.nodes = v.get("n", p.nodes);
  p.blocks = v.get("blocks", p.blocks);
  p.degreeIn = v.get("din", p.degreeIn);
  p.degreeOut = v.get("dout", p.degreeOut);
  p.seed = v.get("seed", p.seed);
  return generateSbm(p);
}

EdgeList runBarabasiAlbert(const Values &v) {
  BarabasiAlbertParams p;
  p.nodes = v.get("n", p.nodes);
  p.edgesPerNode = v.get("m", p.edgesPerNode);
  p.seed = v.get("seed", p.seed);
  return generateBarabasiAlbert(p);
}

/// Every generator; defaults are read from the parameter structs so that
/// help and errors can never disagree with what runs.
const std::vector<GeneratorInfo> &generators() {
  static const std::vector<GeneratorInfo> all = [] {
    const RmatParams r;
    const GridParams g;
    const ErdosRenyiParams e;
    const SbmParams s;
    const BarabasiAlbertParams b;
    return std::vector<GeneratorInfo>{
        {"rmat",
         "R-MAT: 2^scale nodes, ef edges each, power-law degrees",
         {{"scale", text(r.scale)},
          {"ef", text(r.edgeFactor)},
          {"a", text(r.a)},
          {"b", text(r.b)},
          {"c", text(r.c)},
          {"seed", text(r.seed)},
          {"permute", text(r.permute)}},
         runRmat},
        {"grid",
         "2-D grid (side=, or rows= and cols=), road-like",
         {{"side", text(g.rows)}, {"rows", text(g.rows), false}, {"cols", text(g.cols), false}},
         runGrid},
        {"er",
         "Erdos-Renyi: n * deg uniform random edges",
         {{"n", text(e.nodes)}, {"deg", text(e.avgDegree)}, {"seed", text(e.seed)}},
         runErdosRenyi},
        {"sbm",
         "stochastic block model: din edges in block, dout across",
         {{"n", text(s.nodes)},
          {"blocks", text(s.blocks)},
          {"din", text(s.degreeIn)},
          {"dout", text(s.degreeOut)},
          {"seed", text(s.seed)}},
         runSbm},
        {"ba",
         "Barabasi-Albert: m links per node, heavy tail",
         {{"n", text(b.nodes)}, {"m", text(b.edgesPerNode)}, {"seed", text(b.seed)}},
         runBarabasiAlbert},
    };
  }();
  return all;
}

const GeneratorInfo *findGenerator(std::string_view name) {
  for (const GeneratorInfo &g : generators())
    if (g.name == name)
      return &g;
  return nullptr;
}

std::string generatorNames() {
  std::string out;
  for (const GeneratorInfo &g : generators())
    out += fmt::format("{}{}", out.empty() ? "" : ", ", g.name);
  return out;
}

Values::Values(const GeneratorInfo &generator, llvm::StringRef text) : generator_(generator) {
  if (text.trim().empty())
    return;
  llvm::SmallVector<llvm::StringRef, 8> items;
  text.split(items, ',');
  for (llvm::StringRef item : items) {
    item = item.trim();
    if (item.empty())
      throwUserError("{}: empty parameter in '{}' (a doubled or trailing comma?); write key=value,key=value",
                     generator.name, text.str());
    const auto [key, value] = item.split('=');
    if (key.size() == item.size())
      throwUserError("{}: '{}' has no '='; write key=value (accepted: {})", generator.name, item.str(),
                     generator.keyList());
    const Pair pair{std::string_view(key.trim()), std::string_view(value.trim())};
    const KeyInfo *known = nullptr;
    for (const KeyInfo &k : generator.keys)
      if (k.name == pair.key)
        known = &k;
    if (!known) {
      std::string hint;
      for (const KeyInfo &k : generator.keys)
        if (hint.empty() && llvm::StringRef(pair.key).edit_distance(k.name) <= 2 && pair.key.size() > 1)
          hint = fmt::format(" (did you mean '{}'?)", k.name);
      throwUserError("{}: unknown key '{}'{}; accepted keys and defaults: {}", generator.name, pair.key, hint,
                     generator.keyList());
    }
    if (has(pair.key))
      throwUserError("{}: key '{}' is given twice", generator.name, pair.key);
    if (pair.value.empty())
      throwUserError("{}: key '{}' has no value; write {}={} for example", generator.name, pair.key, pair.key,
                     known->defaultText);
    pairs_.push_back(pair);
  }
}

void Values::badValue(const Pair &p, std::string_view expected) const {
  std::string example;
  for (const KeyInfo &k : generator_.keys)
    if (k.name == p.key)
      example = k.defaultText;
  throwUserError("{}: {}={} is not valid: expected {}, like {}={}", generator_.name, p.key, p.value, expected, p.key,
                 example);
}

template <typename T> T Values::get(std::string_view key, T fallback) const {
  const Pair *p = find(key);
  if (!p)
    return fallback;
  const char *first = p->value.data(), *last = first + p->value.size();
  if constexpr (std::is_same_v<T, bool>) {
    if (p->value == "1" || p->value == "true")
      return true;
    if (p->value == "0" || p->value == "false")
      return false;
    badValue(*p, "0 or 1");
  } else if constexpr (std::is_floating_point_v<T>) {
    T value{};
    const auto [end, error] = std::from_chars(first, last, value);
    if (error != std::errc() || end != last || !std::isfinite(value))
      badValue(*p, "a number");
    return value;
  } else {
    // Whole numbers are plain digits: no sign, no exponent, no overflow.
    T value{};
    const auto [end, error] = std::from_chars(first, last, value);
    if (*first == '-' || *first == '+' || end != last ||
        (error != std::errc() && error != std::errc::result_out_of_range))
      badValue(*p, "a whole number >= 0");
    if (error == std::errc::result_out_of_range)
      badValue(*p, fmt::format("a whole number no larger than {}", std::numeric_limits<T>::max()));
    return value;
  }
}

bool isIdentifier(std::string_view name) {
  if (name.empty() || !llvm::isAlpha(name.front()))
    return false;
  for (char ch : name)
    if (!llvm::isAlnum(ch) && ch != '_' && ch != '-')
      return false;
  return true;
}

} // namespace

bool isGeneratorSpec(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  if (findGenerator(name))
    return true;
  // "rmatt:scale=3" is a misspelt generator, not a file: claim it so that the
  // error lists the generators. A path has '/' or '.' in its first part.
  return colon != std::string_view::npos && isIdentifier(name) &&
         text.substr(colon + 1).find('=') != std::string_view::npos && text.find('/') == std::string_view::npos;
}

EdgeList generateFromSpec(std::string_view spec) {
  const auto [name, rest] = llvm::StringRef(spec.data(), spec.size()).split(':');
  const GeneratorInfo *generator = findGenerator(std::string_view(name.trim()));
  if (!generator)
    throwUserError("unknown generator '{}'; known generators: {}\n{}", name.trim().str(), generatorNames(),
                   generatorHelp());
  return generator->run(Values(*generator, rest));
}

std::string generatorHelp() {
  std::vector<std::string> usages;
  size_t width = 0;
  for (const GeneratorInfo &g : generators()) {
    std::string usage(g.name);
    char separator = ':';
    for (const KeyInfo &k : g.keys) {
      if (!k.inUsage)
        continue;
      usage += fmt::format("{}{}={}", separator, k.name, k.defaultText);
      separator = ',';
    }
    width = std::max(width, usage.size());
    usages.push_back(std::move(usage));
  }
  std::string out;
  for (size_t i = 0; i < usages.size(); ++i)
    out += fmt::format("{}  {:<{}}  {}", i ? "\n" : "", usages[i], width, generators()[i].summary);
  return out;
}

} // namespace gnnjit::graph
