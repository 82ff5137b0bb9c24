#include "codegen/SourceWriter.h"

#include "support/Error.h"

namespace gnnjit::codegen {

void SourceWriter::Scope::close() {
  if (SourceWriter *writer = std::exchange(writer_, nullptr))
    writer->close(closer_, depth_);
}

void SourceWriter::indentedLine(std::string_view line) {
  if (!line.empty())
    out_.append(static_cast<size_t>(depth_ * indentWidth_), ' ').append(line);
  out_ += '\n';
}

void SourceWriter::text(std::string_view lines) {
  while (true) {
    size_t end = lines.find('\n');
    indentedLine(lines.substr(0, end));
    if (end == std::string_view::npos)
      return;
    lines.remove_prefix(end + 1);
  }
}

void SourceWriter::blank() { out_ += '\n'; }

void SourceWriter::comment(std::string_view lines) {
  while (true) {
    size_t end = lines.find('\n');
    std::string_view line = lines.substr(0, end);
    indentedLine(line.empty() ? std::string("//") : fmt::format("// {}", line));
    if (end == std::string_view::npos)
      return;
    lines.remove_prefix(end + 1);
  }
}

SourceWriter::Scope SourceWriter::open(const std::string &head, std::string closer) {
  text(head.empty() ? std::string("{") : head + " {");
  ++depth_;
  return Scope(this, std::move(closer), depth_);
}

void SourceWriter::close(const std::string &closer, int scopeDepth) {
  // An outer scope closed before an inner one would misindent everything after.
  if (scopeDepth != depth_)
    throwInternalError("SourceWriter: a scope of depth {} closed at depth {} (close inner scopes first)", scopeDepth,
                       depth_);
  --depth_;
  text(closer);
}

std::string SourceWriter::fresh(std::string_view base) {
  auto counter = nextSuffix_.try_emplace(std::string(base), 0).first;
  while (true) {
    std::string name = fmt::format("{}{}", base, counter->second++);
    if (taken_.insert(name).second)
      return name;
  }
}

void SourceWriter::reserve(std::string_view name) { taken_.emplace(name); }

void SourceWriter::resetNames() {
  nextSuffix_.clear();
  taken_.clear();
}

std::string_view withoutTrailingNewlines(std::string_view text) {
  while (!text.empty() && text.back() == '\n')
    text.remove_suffix(1);
  return text;
}

} // namespace gnnjit::codegen
