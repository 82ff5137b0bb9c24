#include "autotune/ProgramCache.h"

namespace gnnjit::autotune {

const ProgramCache::Entry *ProgramCache::find(lower::Pass pass, const lower::PassConfig &config) const {
  for (const Entry &e : entries_)
    if (e.pass == pass && e.config == config)
      return &e;
  return nullptr;
}

codegen::ProgramPtr ProgramCache::answer(const Entry &entry) {
  if (!entry.program)
    std::rethrow_exception(entry.refusal);
  return entry.program;
}

codegen::ProgramPtr ProgramCache::get(lower::Pass pass, const lower::PassConfig &config) {
  {
    const std::lock_guard lock(mutex_);
    if (const Entry *e = find(pass, config))
      return answer(*e);
  }
  // Planned outside the lock, so candidates plan in parallel; a config two
  // threads planned at once keeps the first program stored.
  Entry entry{pass, config, nullptr, nullptr};
  try {
    entry.program = std::make_shared<const codegen::Program>(codegen::planProgram(lowered_, pass, config));
  } catch (...) {
    entry.refusal = std::current_exception();
  }
  const std::lock_guard lock(mutex_);
  if (const Entry *e = find(pass, config))
    return answer(*e);
  entries_.push_back(std::move(entry));
  return answer(entries_.back());
}

size_t ProgramCache::planned() const {
  const std::lock_guard lock(mutex_);
  return entries_.size();
}

} // namespace gnnjit::autotune
