#include "decoders/pt/insn_expander.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace ptprof::pt {

InsnExpander::InsnExpander(EventSink& next, const PtImageCache& images,
                           std::deque<InsnTimeNote>& notes, size_t image_index,
                           std::deque<InsnImageNote>* image_notes)
    : next_(next),
      images_(images),
      image_index_(image_index),
      by_ip_(&by_image_[image_index]),
      notes_(notes),
      image_notes_(image_notes) {
  event_.body = Instruction{};
}

void InsnExpander::FollowImageNotes(uint64_t first) {
  while (!image_notes_->empty() && image_notes_->front().insn <= first) {
    image_index_ = image_notes_->front().image;
    image_notes_->pop_front();
    by_ip_ = &by_image_[image_index_];
  }
}

void InsnExpander::Fail(std::string why) {
  if (failure_.empty()) failure_ = std::move(why);
}

void InsnExpander::FailAt(uint64_t ip, uint64_t offset, const std::string& what) {
  char where[96];
  std::snprintf(where, sizeof where, "the block at %#" PRIx64 " (trace offset %#" PRIx64 "): ", ip,
                offset);
  Fail(where + what);
}

const Instruction* InsnExpander::InstructionsOf(uint64_t ip, uint64_t last_ip, uint32_t insns,
                                                ExecMode mode, uint64_t offset) {
  const uint64_t key = ip ^ (static_cast<uint64_t>(mode) << 60);
  if (auto it = by_ip_->find(key); it != by_ip_->end() && it->second.count >= insns) {
    const Instruction* first = decoded_.data() + it->second.first;
    if (first[insns - 1].ip == last_ip) return first;
  }
  const size_t start = decoded_.size();
  // Drops what was decoded of this block and says why.
  auto fail = [&](const std::string& what) {
    decoded_.resize(start);
    FailAt(ip, offset, what);
    return nullptr;
  };
  uint64_t at = ip;
  for (uint32_t i = 0; i < insns; ++i) {
    Instruction insn;
    insn.ip = at;
    insn.mode = mode;
    int isid = 0;
    const int read = images_.ReadVisible(at, insn.bytes, sizeof insn.bytes, isid, image_index_);
    if (read <= 0) return fail("no code " + std::to_string(i) + " instructions into it");
    auto decoded = x86_.Decode(insn.bytes, static_cast<size_t>(read), mode);
    if (!decoded)
      return fail("an instruction that does not decode " + std::to_string(i) +
                  " instructions into it");
    insn.size = decoded->length;
    std::memset(insn.bytes + insn.size, 0, sizeof insn.bytes - insn.size);
    insn.iclass = X86KindToBlockEnd(decoded->kind);
    decoded_.push_back(insn);
    at += insn.size;
  }
  if (decoded_.back().ip != last_ip) return fail("its instructions do not end at its last address");
  (*by_ip_)[key] = Decoded{static_cast<uint32_t>(start), insns};
  return decoded_.data() + start;
}

void InsnExpander::Expand(const ExecBlock& block, const EventHeader& header,
                          const BlockClock* clock) {
  if (block.insns == 0) return;
  if (block.truncated) {
    FailAt(block.first_ip, header.offset, "ends in an instruction that crosses sections");
    return;
  }
  if (image_notes_) FollowImageNotes(insns_);
  const Instruction* insns =
      InstructionsOf(block.first_ip, block.last_ip, block.insns, block.mode, header.offset);
  if (!insns) return;
  event_.header = header;
  event_.header.tsc = last_tsc_;
  event_.header.time_ns = last_time_ns_;
  Instruction& out = std::get<Instruction>(event_.body);
  const uint64_t first = insns_;
  // The instruction the next note is for (notes only grow between blocks).
  uint64_t note = notes_.empty() ? UINT64_MAX : notes_.front().insn;
  for (uint32_t i = 0; i < block.insns; ++i) {
    if (i + 1 == block.insns) {
      event_.header.tsc = header.tsc;
      event_.header.time_ns = header.time_ns;
    } else {
      if (first + i >= note) {
        // Events came before this instruction: the time they left.
        while (!notes_.empty() && notes_.front().insn < first + i) notes_.pop_front();
        if (!notes_.empty() && notes_.front().insn == first + i) {
          const uint64_t tsc = notes_.front().tsc;
          event_.header.tsc = tsc;
          event_.header.time_ns =
              clock && tsc != kUnknownTime ? clock->TimeOf(tsc) : kUnknownTime;
          notes_.pop_front();
          time_known_ = true;
        }
        note = notes_.empty() ? UINT64_MAX : notes_.front().insn;
      }
      if (!time_known_) {
        FailAt(block.first_ip, header.offset, "the time before it is not known");
        return;
      }
    }
    out = insns[i];
    out.speculative = block.speculative;
    next_.OnEvent(event_);
    passed_ += 1;
    insns_ += 1;
  }
  last_tsc_ = header.tsc;
  last_time_ns_ = header.time_ns;
  time_known_ = true;
}

void InsnExpander::OnEvent(const TraceEvent& event) {
  if (!failure_.empty()) return;
  if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
    Expand(*block, event.header, nullptr);
    return;
  }
  next_.OnEvent(event);
  passed_ += 1;
}

void InsnExpander::OnBlocks(const BlockBatch& batch) {
  ExecBlock block;
  for (size_t i = 0; i < batch.blocks.size() && failure_.empty(); ++i) {
    UnpackExecBlock(batch.blocks[i], block);
    Expand(block, batch.HeaderOf(i), batch.clock);
  }
}

void InsnExpander::OnEnd() { next_.OnEnd(); }

}  // namespace ptprof::pt
