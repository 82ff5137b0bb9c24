#include "autotune/Records.h"

#include "autotune/ConfigJson.h"
#include "codegen/Version.h"
#include "runtime/Device.h"
#include "support/Error.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sys/file.h>
#include <unistd.h>

namespace gnnjit::autotune {

using nlohmann::json;

namespace {

/// The format's version: a line of another is skipped, not misread.
constexpr int kFormat = 1;

json keyJson(const TuneKey &k) {
  return {{"layer", k.layer}, {"pass", k.pass},   {"stage", k.stage}, {"graph", k.graph},
          {"width", k.width}, {"heads", k.heads}, {"dtype", k.dtype}, {"gpu", k.gpu},
          {"arch", k.arch},   {"driver", k.driver}, {"generator", k.generator}};
}

TuneKey keyFromJson(const json &j) {
  TuneKey k;
  k.layer = j.at("layer").get<std::string>();
  k.pass = j.at("pass").get<std::string>();
  k.stage = j.at("stage").get<int64_t>();
  k.graph = j.at("graph").get<std::string>();
  k.width = j.at("width").get<int64_t>();
  k.heads = j.at("heads").get<int64_t>();
  k.dtype = j.at("dtype").get<std::string>();
  k.gpu = j.at("gpu").get<std::string>();
  k.arch = j.at("arch").get<std::string>();
  k.driver = j.at("driver").get<int>();
  k.generator = j.at("generator").get<std::string>();
  return k;
}

} // namespace

TuneKey keyOnThisDevice(std::string layer, std::string graph, int64_t width, int64_t heads) {
  TuneKey k;
  k.layer = std::move(layer);
  k.graph = std::move(graph);
  k.width = width;
  k.heads = heads;
  k.gpu = runtime::deviceName();
  k.arch = runtime::targetArch();
  k.driver = runtime::driverVersion();
  k.generator = codegen::kGeneratorVersion;
  return k;
}

std::string recordLine(const TuneRecord &r) {
  return json{{"format", kFormat},  {"key", keyJson(r.key)}, {"config", configJson(r.config)},
              {"ms", r.ms},         {"rule_ms", r.ruleMs},   {"candidates", r.candidates}}
      .dump();
}

TuneRecord recordFromLine(const std::string &line) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception &) {
    throw std::invalid_argument("not JSON");
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat)
    throw std::invalid_argument("not a tuning record of format " + std::to_string(kFormat));
  try {
    TuneRecord r;
    r.key = keyFromJson(j.at("key"));
    r.config = configFromJson(j.at("config"));
    r.ms = j.at("ms").get<double>();
    r.ruleMs = j.at("rule_ms").get<double>();
    r.candidates = j.at("candidates").get<int64_t>();
    return r;
  } catch (const json::exception &e) {
    throw std::invalid_argument(std::string("a field is missing or mistyped: ") + e.what());
  }
}

std::optional<TuneRecord> LoadedRecords::find(const TuneKey &key) const {
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if (it->key == key)
      return *it;
  return std::nullopt;
}

RecordStore RecordStore::inCacheFolder(const std::filesystem::path &folder) {
  return RecordStore(folder / "tuning" / "records.jsonl");
}

void RecordStore::append(const TuneRecord &record) const {
  std::error_code ec;
  std::filesystem::create_directories(file_.parent_path(), ec);
  const std::string line = recordLine(record) + "\n";
  const int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    throwUserError("cannot write tuning records to {}: {}", file_.string(), std::strerror(errno));
  // O_APPEND puts each write at the end; the lock keeps a writer on a file
  // system without atomic appends (NFS) from interleaving with another.
  ::flock(fd, LOCK_EX);
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      const int error = errno;
      ::flock(fd, LOCK_UN);
      ::close(fd);
      throwUserError("cannot write tuning records to {}: {}", file_.string(), std::strerror(error));
    }
    done += static_cast<size_t>(n);
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
}

LoadedRecords RecordStore::load() const {
  LoadedRecords loaded;
  std::ifstream in(file_);
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.empty())
      continue;
    try {
      loaded.records.push_back(recordFromLine(line));
    } catch (const std::invalid_argument &e) {
      if (loaded.skipped++ == 0)
        loaded.firstProblem = "line " + std::to_string(number) + ": " + e.what();
    }
  }
  return loaded;
}

} // namespace gnnjit::autotune
