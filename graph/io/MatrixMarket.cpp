#include "graph/io/MatrixMarket.h"

#include "graph/io/LineReader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>

namespace gnnjit::graph {

namespace {

/// Dense matrices past this (64 GiB of floats) come from a wrong size line.
constexpr int64_t kMaxDenseValues = int64_t{1} << 34;
/// A coordinate file read as dense lists only its nonzeros, so its size line
/// alone would set the allocation ("10 100000000 0", 30 bytes, asked for
/// 4 GB). Up to kFreeDenseValues values (64 MiB) may all be zeros; beyond,
/// the file must list an entry per kMaxValuesPerEntry values. Sparse feature
/// files in use (bag-of-words: Cora, CiteSeer, Coauthor) list one per 80-300.
constexpr uint64_t kFreeDenseValues = uint64_t{1} << 24;
constexpr uint64_t kMaxValuesPerEntry = 1024;
constexpr int64_t kLowest = std::numeric_limits<int64_t>::min();
constexpr int64_t kHighest = std::numeric_limits<int64_t>::max();
constexpr std::string_view kBanner =
    "the Matrix Market header '%%MatrixMarket matrix coordinate|array pattern|real|integer general|symmetric'";

enum class Field { Pattern, Real, Integer };
enum class Purpose { Graph, Dense };

struct Header {
  bool coordinate = true;
  Field field = Field::Real;
  bool symmetric = false;
  int64_t rows = 0, cols = 0;
  int64_t entries = 0; ///< declared entries (coordinate) or stored values (array)
  int64_t sizeLine = 0;
  size_t reserve = 0; ///< how many entries are safe to reserve memory for
};

/// a * b for sizes in [0, 2^40], saturating where it does not fit.
uint64_t saturatingProduct(int64_t a, int64_t b) {
  const auto x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
  return x != 0 && y > std::numeric_limits<uint64_t>::max() / x ? std::numeric_limits<uint64_t>::max() : x * y;
}

bool equalsIgnoringCase(std::string_view token, std::string_view lower) {
  return token.size() == lower.size() && std::equal(token.begin(), token.end(), lower.begin(), [](char a, char b) {
           return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b;
         });
}

void readBanner(LineReader &reader, Purpose purpose, Header &header) {
  std::string_view line;
  if (!reader.next(line))
    reader.failAtEnd(kBanner, "the file is empty");
  std::array<std::string_view, 5> word;
  if (splitFields(line, word, false) != 5 || !equalsIgnoringCase(word[0], "%%matrixmarket"))
    reader.fail(kBanner, line);
  if (!equalsIgnoringCase(word[1], "matrix"))
    reader.fail("object 'matrix' in the header", word[1]);

  if (equalsIgnoringCase(word[2], "coordinate"))
    header.coordinate = true;
  else if (equalsIgnoringCase(word[2], "array"))
    header.coordinate = false;
  else
    reader.fail("format 'coordinate' or 'array' in the header", word[2]);
  if (purpose == Purpose::Graph && !header.coordinate)
    reader.fail("format 'coordinate' in the header (a graph is read from the entries of a sparse matrix)",
                word[2]);

  if (equalsIgnoringCase(word[3], "pattern"))
    header.field = Field::Pattern;
  else if (equalsIgnoringCase(word[3], "real") || equalsIgnoringCase(word[3], "double"))
    header.field = Field::Real;
  else if (equalsIgnoringCase(word[3], "integer"))
    header.field = Field::Integer;
  else if (equalsIgnoringCase(word[3], "complex"))
    reader.fail("field 'pattern', 'real' or 'integer' in the header (complex matrices are not supported)",
                word[3]);
  else
    reader.fail("field 'pattern', 'real' or 'integer' in the header", word[3]);
  if (!header.coordinate && header.field == Field::Pattern)
    reader.fail("field 'real' or 'integer' for an array matrix (only coordinate matrices can be patterns)",
                word[3]);

  if (equalsIgnoringCase(word[4], "general"))
    header.symmetric = false;
  else if (equalsIgnoringCase(word[4], "symmetric"))
    header.symmetric = true;
  else if (equalsIgnoringCase(word[4], "skew-symmetric") || equalsIgnoringCase(word[4], "hermitian"))
    reader.fail("symmetry 'general' or 'symmetric' in the header (skew-symmetric and hermitian matrices are "
                "not supported)",
                word[4]);
  else
    reader.fail("symmetry 'general' or 'symmetric' in the header", word[4]);
}

/// Reads the banner, comments and the size line, and checks the declared
/// sizes against what the purpose allows and the file can hold.
Header readHeader(LineReader &reader, Purpose purpose) {
  Header header;
  readBanner(reader, purpose, header);
  const std::string_view sizeForm = header.coordinate ? "the size line 'ROWS COLS ENTRIES'" : "the size line 'ROWS COLS'";
  std::string_view line;
  for (;;) {
    if (!reader.next(line))
      reader.failAtEnd(sizeForm);
    const int first = firstNonBlank(line);
    if (first >= 0 && first != '%')
      break;
  }
  std::array<std::string_view, 3> size;
  if (splitFields(line, size, false) != (header.coordinate ? 3u : 2u))
    reader.fail(sizeForm, line);
  const int64_t maxSide = purpose == Purpose::Graph ? kMaxNodeCount : kMaxDenseValues;
  header.rows = reader.parseInt(size[0], "a row count", 0, maxSide);
  header.cols = reader.parseInt(size[1], "a column count", 0, maxSide);
  header.sizeLine = reader.lineNumber();

  if (purpose == Purpose::Graph && header.rows != header.cols)
    reader.fail(fmt::format("a square adjacency matrix, as a graph needs one row and one column per node "
                            "(this matrix is {}x{})",
                            header.rows, header.cols),
                line);
  if (header.symmetric && header.rows != header.cols)
    reader.fail(fmt::format("a square matrix, as the header says symmetric (this matrix is {}x{})", header.rows,
                            header.cols),
                line);
  const uint64_t values = saturatingProduct(header.rows, header.cols);
  if (purpose == Purpose::Dense && values > static_cast<uint64_t>(kMaxDenseValues))
    reader.fail(fmt::format("a dense matrix of at most {} values ({}x{} floats would not fit in memory)",
                            kMaxDenseValues, header.rows, header.cols),
                line);
  // A symmetric matrix stores one triangle, diagonal included.
  const int64_t n = header.rows;
  const uint64_t stored = !header.symmetric ? values
                          : n % 2 == 0      ? saturatingProduct(n / 2, n + 1)
                                            : saturatingProduct(n, (n + 1) / 2);

  if (header.coordinate) {
    header.entries = reader.parseInt(size[2], "an entry count", 0, kHighest);
    if (static_cast<uint64_t>(header.entries) > stored)
      reader.fail(fmt::format("an entry count of at most {} for a {}{}x{} matrix", stored,
                              header.symmetric ? "symmetric " : "", header.rows, header.cols),
                  size[2]);
    if (purpose == Purpose::Dense && values > kFreeDenseValues &&
        values / kMaxValuesPerEntry > static_cast<uint64_t>(header.entries))
      reader.fail(fmt::format("a coordinate matrix that lists at least one entry per {} values when read as dense "
                              "({}x{} is {} values, but only {} entries are declared; is the size line wrong?)",
                              kMaxValuesPerEntry, header.rows, header.cols, values, header.entries),
                  line);
    const uint64_t minBytes = header.field == Field::Pattern ? 4 : 6; // "1 1\n", "1 1 1\n"
    header.reserve = reader.checkDeclaredCount(static_cast<uint64_t>(header.entries), minBytes, "entries", line);
  } else {
    header.entries = static_cast<int64_t>(stored);
    header.reserve = reader.checkDeclaredCount(static_cast<uint64_t>(header.entries), 2, "values", line);
  }
  return header;
}

/// Reads the next entry line into `fields` (blank and '%' lines skipped);
/// false at the end of the file. Fails on an entry past the declared count
/// or with the wrong number of fields.
template <size_t N>
bool nextEntry(LineReader &reader, const Header &header, int64_t done, size_t width, std::string_view form,
               std::array<std::string_view, N> &fields) {
  std::string_view line;
  for (;;) {
    if (!reader.next(line))
      return false;
    const int first = firstNonBlank(line);
    if (first >= 0 && first != '%')
      break;
  }
  if (done == header.entries)
    reader.fail(fmt::format("the end of the file after the {} entries that line {} declares", header.entries,
                            header.sizeLine),
                line);
  if (splitFields(line, fields, false) != width)
    reader.fail(form, line);
  return true;
}

/// A symmetric file stores the lower triangle only (ROW >= COL); an entry
/// above it would be its own mirror image stored twice, or a general matrix
/// mislabelled, so it is refused rather than guessed at.
void checkTriangle(const LineReader &reader, const Header &header, int64_t row, int64_t col,
                   std::string_view rowToken, std::string_view colToken) {
  if (header.symmetric && row < col)
    reader.fail("an entry on or below the diagonal (ROW >= COL): a symmetric Matrix Market file stores the lower "
                "triangle; if the matrix is not symmetric, say 'general' in the header",
                fmt::format("{} {}", rowToken, colToken));
}

[[noreturn]] void failShort(const LineReader &reader, const Header &header, int64_t done) {
  reader.failAtEnd(fmt::format("entry {} of the {} that line {} declares", done + 1, header.entries, header.sizeLine),
                   fmt::format("the file ends after {} of {} entries; is it truncated?", done, header.entries));
}

float readValue(const LineReader &reader, const Header &header, std::string_view token) {
  if (header.field == Field::Integer)
    return static_cast<float>(reader.parseInt(token, "an integer value", kLowest, kHighest));
  return reader.parseFloat(token, "a value");
}

std::string_view entryForm(const Header &header) {
  switch (header.field) {
  case Field::Pattern:
    return "an entry 'ROW COL' (the header says pattern)";
  case Field::Integer:
    return "an entry 'ROW COL VALUE' (the header says integer)";
  case Field::Real:
    break;
  }
  return "an entry 'ROW COL VALUE' (the header says real)";
}

} // namespace

EdgeList readMatrixMarketGraph(const std::filesystem::path &file) {
  LineReader reader(file);
  const Header header = readHeader(reader, Purpose::Graph);
  const bool weighted = header.field != Field::Pattern;
  const size_t width = weighted ? 3 : 2;
  const std::string_view form = entryForm(header);

  EdgeList edges;
  edges.numNodes = header.rows;
  const size_t reserve = header.symmetric ? header.reserve * 2 : header.reserve;
  edges.reserve(reserve);
  if (weighted)
    edges.weight.reserve(reserve);

  std::array<std::string_view, 3> fields;
  int64_t done = 0;
  while (nextEntry(reader, header, done, width, form, fields)) {
    const int64_t row = reader.parseInt(fields[0], "a row index", 1, header.rows) - 1;
    const int64_t col = reader.parseInt(fields[1], "a column index", 1, header.cols) - 1;
    checkTriangle(reader, header, row, col, fields[0], fields[1]);
    if (weighted) {
      const float value = readValue(reader, header, fields[2]);
      edges.add(row, col, value);
      if (header.symmetric && row != col)
        edges.add(col, row, value);
    } else {
      edges.add(row, col);
      if (header.symmetric && row != col)
        edges.add(col, row);
    }
    ++done;
  }
  if (done < header.entries)
    failShort(reader, header, done);
  return edges;
}

DenseMatrix readMatrixMarketDense(const std::filesystem::path &file) {
  LineReader reader(file);
  const Header header = readHeader(reader, Purpose::Dense);
  DenseMatrix matrix;
  matrix.rows = header.rows;
  matrix.cols = header.cols;
  auto allocate = [&] { matrix.values.assign(static_cast<size_t>(header.rows * header.cols), 0.0f); };
  auto set = [&](int64_t row, int64_t col, float value) {
    matrix.values[static_cast<size_t>(row * header.cols + col)] = value;
    if (header.symmetric)
      matrix.values[static_cast<size_t>(col * header.cols + row)] = value;
  };

  int64_t done = 0;
  if (header.coordinate) {
    // The entries first: the matrix is allocated once the file has shown
    // that it holds the entries that justify its size (a gzip file may
    // declare a million and end after the size line).
    struct Entry {
      int64_t row, col;
      float value;
    };
    std::vector<Entry> entries;
    entries.reserve(header.reserve);
    const size_t width = header.field == Field::Pattern ? 2 : 3;
    const std::string_view form = entryForm(header);
    std::array<std::string_view, 3> fields;
    while (nextEntry(reader, header, done, width, form, fields)) {
      const int64_t row = reader.parseInt(fields[0], "a row index", 1, header.rows) - 1;
      const int64_t col = reader.parseInt(fields[1], "a column index", 1, header.cols) - 1;
      checkTriangle(reader, header, row, col, fields[0], fields[1]);
      entries.push_back({row, col, width == 3 ? readValue(reader, header, fields[2]) : 1.0f});
      ++done;
    }
    if (done < header.entries)
      failShort(reader, header, done);
    allocate();
    for (const Entry &e : entries) // in file order: a repeated cell keeps its last value
      set(e.row, e.col, e.value);
  } else {
    allocate();
    // Column-major; a symmetric array lists the lower triangle column by column.
    std::array<std::string_view, 1> fields;
    int64_t row = 0, col = 0;
    while (nextEntry(reader, header, done, 1, "one value per line (the header says array)", fields)) {
      set(row, col, readValue(reader, header, fields[0]));
      if (++row == header.rows) {
        ++col;
        row = header.symmetric ? col : 0;
      }
      ++done;
    }
    if (done < header.entries)
      failShort(reader, header, done);
  }
  return matrix;
}

} // namespace gnnjit::graph
