#include "autotune/Precompiler.h"

#include "exec/KernelSource.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>

namespace gnnjit::autotune {

Precompiler::Precompiler(runtime::KernelCache &cache, runtime::CompileOptions options, unsigned threads)
    : cache_(cache), options_(std::move(options)) {
  const unsigned n = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  for (unsigned k = 0; k < n; ++k)
    threads_.emplace_back([this] { work(); });
}

Precompiler::~Precompiler() {
  stop();
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread &t : threads_)
    t.join();
}

std::vector<std::string> Precompiler::keysOf(const std::vector<runtime::Source> &sources) const {
  std::vector<std::string> keys;
  for (const runtime::Source &s : sources)
    keys.push_back(cache_.key(s, options_));
  return keys;
}

std::string Precompiler::keyOf(const codegen::GeneratedModule &module) {
  {
    std::lock_guard lock(mutex_);
    if (auto found = moduleKeys_.find(&module); found != moduleKeys_.end())
      return found->second;
  }
  std::string key = cache_.key(exec::kernelSource(module), options_);
  std::lock_guard lock(mutex_);
  return moduleKeys_.emplace(&module, std::move(key)).first->second;
}

std::vector<std::string> Precompiler::enqueue(const std::vector<runtime::Source> &sources, bool ahead) {
  std::vector<std::string> keys = keysOf(sources);
  enqueueKeyed(keys, sources, ahead);
  return keys;
}

void Precompiler::enqueue(const codegen::GeneratedModule &module) {
  enqueueKeyed({keyOf(module)}, {exec::kernelSource(module)}, false);
}

void Precompiler::enqueueKeyed(const std::vector<std::string> &keys, const std::vector<runtime::Source> &sources,
                               bool ahead) {
  {
    std::lock_guard lock(mutex_);
    std::deque<std::pair<std::string, runtime::Source>> jobs;
    for (size_t k = 0; k < sources.size(); ++k)
      if (known_.insert(keys[k]).second) {
        jobs.emplace_back(keys[k], sources[k]);
        ++report_.queued;
      } else if (ahead) {
        const auto queued =
            std::find_if(queue_.begin(), queue_.end(), [&](const auto &job) { return job.first == keys[k]; });
        if (queued != queue_.end()) {
          jobs.push_back(std::move(*queued));
          queue_.erase(queued);
        }
      }
    queue_.insert(ahead ? queue_.begin() : queue_.end(), std::make_move_iterator(jobs.begin()),
                  std::make_move_iterator(jobs.end()));
  }
  changed_.notify_all();
}

bool Precompiler::compiled(const std::vector<std::string> &keys) const {
  return std::all_of(keys.begin(), keys.end(), [&](const std::string &key) {
    {
      std::lock_guard lock(mutex_);
      if (failed_.count(key))
        return true;
    }
    return cache_.holds(key);
  });
}

bool Precompiler::waitForProgress(double seconds) {
  std::unique_lock lock(mutex_);
  if (queue_.empty() && running_ == 0)
    return false;
  const size_t before = finished_;
  changed_.wait_for(lock, std::chrono::duration<double>(seconds),
                    [&] { return finished_ != before || (queue_.empty() && running_ == 0); });
  return true;
}

void Precompiler::setDeadline(double seconds) {
  {
    std::lock_guard lock(mutex_);
    deadline_ = seconds;
  }
  changed_.notify_all();
}

void Precompiler::stop() {
  {
    std::lock_guard lock(mutex_);
    report_.dropped += queue_.size();
    queue_.clear();
  }
  changed_.notify_all();
}

Precompiler::Report Precompiler::report() const {
  std::lock_guard lock(mutex_);
  Report r = report_;
  r.busySeconds = firstStart_ < 0 ? 0 : lastEnd_ - firstStart_;
  return r;
}

bool Precompiler::mayStart() const {
  // The longest compile so far, not the mean: one that ends past the
  // deadline holds up the end of tuning (compiles cannot be cut short).
  return clock_.seconds() + longestCompileSeconds_ <= deadline_;
}

void Precompiler::work() {
  for (;;) {
    std::pair<std::string, runtime::Source> job;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_)
        return;
      if (!mayStart()) { // too late to finish: what is left would only delay the end
        report_.dropped += queue_.size();
        queue_.clear();
        changed_.notify_all();
        continue;
      }
      job = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
      if (firstStart_ < 0)
        firstStart_ = clock_.seconds();
    }
    const double start = clock_.seconds();
    const bool held = cache_.holds(job.first);
    bool ok = true;
    try {
      ok = static_cast<bool>(cache_.tryCompile(job.second, options_));
    } catch (const std::exception &) {
      ok = false; // timing the candidate compiles it again and reports why
    }
    {
      std::lock_guard lock(mutex_);
      --running_;
      ++finished_;
      lastEnd_ = clock_.seconds();
      if (!ok) {
        failed_.insert(job.first);
        ++report_.failed;
      } else if (!held) { // a cache hit says nothing of how long a compile takes
        ++report_.compiled;
        longestCompileSeconds_ = std::max(longestCompileSeconds_, lastEnd_ - start);
      }
    }
    changed_.notify_all();
  }
}

} // namespace gnnjit::autotune
