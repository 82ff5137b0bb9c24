// Every config of a layer's passes planned once: the rule's, each
// candidate's, the search's combinations of stage winners and the configs a
// run replays from tuning records are planned (lower::planPass, then
// codegen's emission) the first time they are asked for, and shared after
// by everything that needs them: the candidates' compiles, the timer's
// runners, the run that follows tuning.
#pragma once

#include "codegen/Program.h"
#include "lower/Stages.h"
#include "lower/TuneConfig.h"

#include <exception>
#include <mutex>
#include <vector>

namespace gnnjit::autotune {

class ProgramCache {
public:
  /// `lowered` must outlive the cache.
  explicit ProgramCache(const lower::LoweredLayer &lowered) : lowered_(lowered) {}
  ProgramCache(const ProgramCache &) = delete;
  ProgramCache &operator=(const ProgramCache &) = delete;

  /// The program of `pass` under `config`, planned on first use; a
  /// planner's refusal is remembered and thrown again each time.
  /// Thread-safe (candidates are planned in parallel).
  codegen::ProgramPtr get(lower::Pass pass, const lower::PassConfig &config);
  /// How many configs were planned (refusals included).
  size_t planned() const;
  const lower::LoweredLayer &lowered() const { return lowered_; }

private:
  struct Entry {
    lower::Pass pass;
    lower::PassConfig config;
    codegen::ProgramPtr program; ///< null: refused
    std::exception_ptr refusal;  ///< what the planner threw
  };
  /// The entry of (pass, config), or null. Call with the mutex held.
  const Entry *find(lower::Pass pass, const lower::PassConfig &config) const;
  static codegen::ProgramPtr answer(const Entry &entry);

  const lower::LoweredLayer &lowered_;
  mutable std::mutex mutex_;
  std::vector<Entry> entries_; ///< tens of configs per pass: a list, compared with ==
};

} // namespace gnnjit::autotune
