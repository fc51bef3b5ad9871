#include "sideband/address_space.h"

#include <algorithm>

namespace ptprof {

AddressSpaces::Space& AddressSpaces::NewState(int32_t pid, uint64_t time,
                                              std::vector<Mapping> user) {
  auto& states = of_pid_[pid];
  // Several changes at one time make one state.
  if (!states.empty() && spaces_[states.back()].from == time) {
    Space& last = spaces_[states.back()];
    last.user = std::move(user);
    return last;
  }
  states.push_back(spaces_.size());
  spaces_.push_back(Space{pid, time, std::move(user)});
  return spaces_.back();
}

const AddressSpaces::Space* AddressSpaces::Latest(int32_t pid) const {
  auto it = of_pid_.find(pid);
  if (it == of_pid_.end() || it->second.empty()) return nullptr;
  return &spaces_[it->second.back()];
}

void AddressSpaces::Map(int32_t pid, uint64_t time, const Mapping& mapping) {
  if (pid == kKernel) {
    kernel_.push_back(mapping);
    return;
  }
  const Space* latest = Latest(pid);
  std::vector<Mapping> user = latest ? latest->user : std::vector<Mapping>{};
  // A mapping made again at the same place (perf repeats them) changes nothing.
  if (std::find(user.begin(), user.end(), mapping) != user.end() && latest) return;
  user.push_back(mapping);
  NewState(pid, time, std::move(user));
}

void AddressSpaces::Exec(int32_t pid, uint64_t time) { NewState(pid, time, {}); }

void AddressSpaces::Fork(int32_t child, int32_t parent, uint64_t time) {
  if (child == parent) return;  // a thread shares its process's mappings
  const Space* from = Latest(parent);
  NewState(child, time, from ? from->user : std::vector<Mapping>{});
}

void AddressSpaces::Exit(int32_t, uint64_t) {}

size_t AddressSpaces::SpaceAt(int32_t pid, uint64_t time, TimeSpan* span) const {
  auto it = of_pid_.find(pid);
  if (it == of_pid_.end() || it->second.empty()) {
    if (span) *span = TimeSpan{};
    return kKernelOnly;
  }
  const std::vector<size_t>& states = it->second;
  // The last state starting at or before `time`, else the first (from time 0 on).
  auto after = std::upper_bound(states.begin(), states.end(), time,
                                [this](uint64_t t, size_t s) { return t < spaces_[s].from; });
  const auto state = after == states.begin() ? after : after - 1;
  if (span)
    *span = TimeSpan{state == states.begin() ? 0 : spaces_[*state].from,
                     state + 1 == states.end() ? UINT64_MAX : spaces_[*(state + 1)].from};
  return *state + 1;
}

std::vector<Mapping> AddressSpaces::MappingsOf(size_t space) const {
  std::vector<Mapping> mappings = kernel_;
  if (space != kKernelOnly && space <= spaces_.size()) {
    const auto& user = spaces_[space - 1].user;
    mappings.insert(mappings.end(), user.begin(), user.end());
  }
  return mappings;
}

}  // namespace ptprof
