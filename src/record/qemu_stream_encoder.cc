#include "src/record/qemu_stream_encoder.h"

#include <fmt/format.h>

#include "sideband/demangle.h"
#include "sideband/elf_image.h"
#include "src/record/mapped_elfs.h"

namespace ptprof::record {

QemuStreamEncoder::QemuStreamEncoder(const QemuStream& stream, const QemuFlowOptions& options)
    : stream_(stream), options_(options), cache_(stream) {}

QemuStreamEncoder::~QemuStreamEncoder() = default;

// addr=SYMBOL triggers, resolved through the program and its loader as QEMU mapped them (known
// from the stream's info before the first thread runs).
Status ResolveQemuAddressTriggers(const QemuStream& stream, triggers::TriggerEngine& engine) {
  const auto& specs = engine.policy().triggers;
  for (size_t i = 0; i < specs.size(); ++i) {
    const triggers::TriggerSpec& t = specs[i];
    if (t.kind != triggers::TriggerKind::kAddress || t.address != 0) continue;
    uint64_t found = 0;
    std::string looked;
    for (const MappedElf& elf : FindMappedElfs(stream.info, stream.sideband, 0)) {
      looked += (looked.empty() ? "" : ", ") + elf.path;
      auto image = LoadElfImage(elf.path, elf.base);
      if (!image) continue;
      for (const Symbol& symbol : image->symbols)
        if (NamesSymbol(t.symbol, symbol.name)) {
          found = symbol.address;
          break;
        }
      if (found) break;
    }
    if (found == 0)
      return Fail(fmt::format("--snapshot-on '{}': no symbol '{}' in {} (addr= resolves the "
                              "program's and its loader's symbols; use addr=0xADDR for others)",
                              t.text, t.symbol, looked.empty() ? "the program" : looked));
    engine.ResolveAddress(i, found);
  }
  return {};
}

Status QemuStreamEncoder::OnTriggerEvent(const triggers::TriggerEvent& event) {
  waiting_.push_back(event);
  DeliverEvents();
  return {};
}

void QemuStreamEncoder::DeliverEvents() {
  std::erase_if(waiting_, [&](const triggers::TriggerEvent& event) {
    auto it = by_tid_.find(event.tid);
    if (it == by_tid_.end() || !it->second->encoder) return false;
    it->second->encoder->AddTriggerEvent(event);
    return true;
  });
}

Status QemuStreamEncoder::Start(Thread& thread, uint64_t tsc_begin) {
  if (!resolved_ && options_.triggers) {
    resolved_ = true;
    if (auto s = ResolveQemuAddressTriggers(stream_, *options_.triggers); !s) return s;
  }
  thread.encoder =
      std::make_unique<QemuThreadEncoder>(stream_, cache_, options_, thread.tid, tsc_begin);
  DeliverEvents();
  std::vector<uint32_t> held;
  held.swap(thread.held);
  if (auto s = thread.encoder->Feed(held.data(), held.size()); !s)
    return Fail(fmt::format("thread {}: {}", thread.tid, s.error().message));
  return TakeClones(thread);
}

// Threads the given one created can start now (their own words may be waiting already).
Status QemuStreamEncoder::TakeClones(Thread& thread) {
  for (auto [child, tsc] : thread.encoder->TakeClones()) {
    auto it = by_tid_.find(child);
    if (it != by_tid_.end() && !it->second->encoder) {
      if (auto s = Start(*it->second, tsc); !s) return s;
    } else if (it == by_tid_.end()) {
      clone_times_[child] = tsc;
    }
  }
  return {};
}

Status QemuStreamEncoder::OnExec(uint32_t tid, const uint32_t* words, size_t count) {
  auto it = by_tid_.find(tid);
  if (it == by_tid_.end()) {
    auto thread = std::make_unique<Thread>();
    thread->tid = tid;
    it = by_tid_.emplace(tid, thread.get()).first;
    const bool first = threads_.empty();
    threads_.push_back(std::move(thread));
    auto clone = clone_times_.find(tid);
    if (first || clone != clone_times_.end()) {
      if (auto s = Start(*it->second, first ? 0 : clone->second); !s) return s;
    }
  }
  Thread& thread = *it->second;
  if (!thread.encoder) {
    thread.held.insert(thread.held.end(), words, words + count);
    return {};
  }
  if (auto s = thread.encoder->Feed(words, count); !s)
    return Fail(fmt::format("thread {}: {}", tid, s.error().message));
  return TakeClones(thread);
}

Result<std::vector<QemuThreadTrace>> QemuStreamEncoder::Finish() {
  // Finishing a thread can reveal the threads it created (its last words are encoded now); a
  // thread whose creator was never seen (its words were lost) starts at time 0. The stream is
  // whole now: an event for a thread it never showed goes to the first thread.
  if (!threads_.empty())
    for (triggers::TriggerEvent& event : waiting_)
      if (!by_tid_.contains(event.tid)) event.tid = threads_.front()->tid;
  DeliverEvents();
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < threads_.size(); ++i) {
      Thread& thread = *threads_[i];
      if (thread.trace) continue;
      if (!thread.encoder) continue;
      auto trace = thread.encoder->Finish();
      if (!trace) return Fail(fmt::format("thread {}: {}", thread.tid, trace.error().message));
      thread.trace = std::make_unique<QemuThreadTrace>(std::move(*trace));
      if (auto s = TakeClones(thread); !s) return tl::unexpected(s.error());
      progress = true;
    }
    if (!progress) {
      for (auto& thread : threads_) {
        if (thread->encoder) continue;
        if (auto s = Start(*thread, 0); !s) return tl::unexpected(s.error());
        progress = true;
        break;
      }
    }
  }
  std::vector<QemuThreadTrace> traces;
  for (auto& thread : threads_) traces.push_back(std::move(*thread->trace));
  return traces;
}

}  // namespace ptprof::record
