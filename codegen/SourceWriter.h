// Builds generated CUDA C++ line by line: indentation follows scopes, names
// are unique per writer (one writer per kernel), and the same calls always
// produce byte-identical text, so the kernel cache hits.
#pragma once

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace gnnjit::codegen {

class SourceWriter {
public:
  /// An open brace scope; closing it (or destroying it) dedents and writes
  /// its closer ("}" or e.g. "};"). Move-only; must not outlive its writer.
  class Scope {
  public:
    Scope(Scope &&other) noexcept
        : writer_(std::exchange(other.writer_, nullptr)), closer_(std::move(other.closer_)), depth_(other.depth_) {}
    Scope &operator=(Scope &&) = delete;
    Scope(const Scope &) = delete;
    ~Scope() { close(); }
    /// Closes early; later calls do nothing. Scopes close innermost first.
    void close();

  private:
    friend class SourceWriter;
    Scope(SourceWriter *writer, std::string closer, int depth)
        : writer_(writer), closer_(std::move(closer)), depth_(depth) {}
    SourceWriter *writer_;
    std::string closer_;
    int depth_; ///< the writer's depth inside this scope
  };

  explicit SourceWriter(int indentWidth = 2) : indentWidth_(indentWidth) {}

  /// One formatted line at the current indentation. Text holding '\n' is
  /// split, each line indented.
  template <typename... Args> void line(fmt::format_string<Args...> format, Args &&...args) {
    text(fmt::format(format, std::forward<Args>(args)...));
  }
  /// Like line(), for text already formatted (e.g. a block of lines).
  void text(std::string_view lines);
  /// An empty line (never trailing spaces).
  void blank();
  /// `// ` before each line of `lines`.
  void comment(std::string_view lines);

  /// Writes "<head> {" and indents until the Scope closes with "}".
  template <typename... Args> [[nodiscard]] Scope scope(fmt::format_string<Args...> head, Args &&...args) {
    return open(fmt::format(head, std::forward<Args>(args)...), "}");
  }
  /// As scope(), closing with `closer` (e.g. "};" for a struct).
  template <typename... Args>
  [[nodiscard]] Scope scopeClosedBy(std::string_view closer, fmt::format_string<Args...> head, Args &&...args) {
    return open(fmt::format(head, std::forward<Args>(args)...), std::string(closer));
  }

  /// A name no earlier fresh() or reserve() of this writer returned:
  /// base0, base1, ... in call order (skipping taken names).
  std::string fresh(std::string_view base);
  /// Marks a fixed name (a kernel parameter, say) as taken.
  void reserve(std::string_view name);
  /// Forgets all names, for the next kernel written by the same writer.
  void resetNames();

  int depth() const { return depth_; }
  const std::string &str() const { return out_; }

private:
  Scope open(const std::string &head, std::string closer);
  void close(const std::string &closer, int scopeDepth);
  void indentedLine(std::string_view line);

  int indentWidth_;
  int depth_ = 0;
  std::string out_;
  std::map<std::string, int, std::less<>> nextSuffix_; ///< ordered: no hash-order effects
  std::set<std::string, std::less<>> taken_;
};

/// `text` without the newlines it ends with, to nest one writer's lines in
/// another without a blank line.
std::string_view withoutTrailingNewlines(std::string_view text);

} // namespace gnnjit::codegen
