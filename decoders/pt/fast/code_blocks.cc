#include "decoders/pt/fast/code_blocks.h"

#include <algorithm>
#include <thread>

#include <cinttypes>
#include <cstdio>
#include <new>

#include "decoders/pt/fast/tnt_runs.h"
#include "decoders/pt/flow_config.h"
#include "sideband/x86_length.h"

namespace ptprof::pt::fast {

namespace {

std::string Hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, value);
  return text;
}

// mov cr3, r: 0f 22 /r with ModRM.reg == 3, after legacy and REX prefixes.
bool MovesToCr3(const uint8_t* raw, size_t size) {
  size_t i = 0;
  while (i < size &&
         (raw[i] == 0x66 || raw[i] == 0x67 || raw[i] == 0xf2 || raw[i] == 0xf3 || raw[i] == 0x2e ||
          raw[i] == 0x36 || raw[i] == 0x3e || raw[i] == 0x26 || raw[i] == 0x64 || raw[i] == 0x65 ||
          raw[i] == 0xf0 || (raw[i] & 0xf0) == 0x40))
    ++i;
  return i + 2 < size && raw[i] == 0x0f && raw[i + 1] == 0x22 && ((raw[i + 2] >> 3) & 7) == 3;
}

}  // namespace

bool NeedsTrace(const X86Insn& insn) {
  switch (insn.kind) {
    case X86Kind::kOther:
      return false;
    case X86Kind::kCallNear:
    case X86Kind::kJumpNear:
      return !insn.has_branch_disp;
    default:
      return true;
  }
}

CodeBlocks::CodeBlocks(const PtImageCache& images, size_t image_index)
    : images_(images), image_index_(image_index) {}

CodeBlocks::~CodeBlocks() = default;

TntRuns& CodeBlocks::runs() {
  if (!runs_) runs_ = std::make_unique<TntRuns>(*this);
  return *runs_;
}

bool CodeBlocks::DecodeAt(uint64_t ip, pt_exec_mode mode, CodeInsn& out, std::string& why) const {
  uint8_t raw[pt_max_insn_size];
  int isid = 0;
  const int read = ReadAt(ip, raw, sizeof raw, isid, why);
  return read > 0 && DecodeRead(ip, mode, raw, read, isid, out, why);
}

int CodeBlocks::ReadAt(uint64_t ip, uint8_t* raw, size_t size, int& isid,
                       std::string& why) const {
  const int read = images_.ReadVisible(ip, raw, size, isid, image_index_);
  if (read <= 0) {
    why = "no code mapped at " + Hex(ip);
    return 0;
  }
  return read;
}

bool CodeBlocks::DecodeRead(uint64_t ip, pt_exec_mode mode, const uint8_t* raw, int read,
                            int isid, CodeInsn& out, std::string& why) const {
  auto decoded = x86_.Decode(raw, static_cast<size_t>(read), ToExecMode(mode));
  if (!decoded) {
    why = (read < static_cast<int>(pt_max_insn_size) ? "an instruction that may cross sections at "
                                                     : "an instruction that does not decode at ") +
          Hex(ip);
    return false;
  }
  out.ip = ip;
  out.insn = *decoded;
  out.isid = isid;
  out.writes_cr3 = MovesToCr3(raw, decoded->length);
  return true;
}

void CodeBlocks::NoteSpan(uint64_t begin, uint64_t end, pt_exec_mode mode) {
  std::map<uint64_t, uint64_t>& spans = spans_[static_cast<unsigned>(mode) & 3];
  // Merge with every range it touches.
  auto it = spans.upper_bound(begin);
  if (it != spans.begin() && std::prev(it)->second >= begin) --it;
  while (it != spans.end() && it->first <= end) {
    begin = std::min(begin, it->first);
    end = std::max(end, it->second);
    it = spans.erase(it);
  }
  spans.emplace(begin, end);
}

bool CodeBlocks::InOneMode(uint64_t begin, uint64_t end, pt_exec_mode mode, std::string& why) {
  if (!any_mode_) {
    any_mode_ = true;
    first_mode_ = mode;
    return true;
  }
  if (!mixed_) {
    if (mode == first_mode_) return true;
    mixed_ = true;
    block_memory_.ForEach([&](const CodeBlock* block) {
      NoteSpan(block->first_ip, block->last_ip + block->last.length, first_mode_);
    });
    for (const auto& [key, insn] : insns_)
      NoteSpan(insn.ip, insn.ip + insn.insn.length, first_mode_);
  }
  for (unsigned other = 0; other < 4; ++other) {
    if (other == (static_cast<unsigned>(mode) & 3)) continue;
    const std::map<uint64_t, uint64_t>& spans = spans_[other];
    auto it = spans.lower_bound(end);  // the first range that begins at or past the end
    if (it != spans.begin() && std::prev(it)->second > begin) {
      why = "code at " + Hex(begin) + " decoded in another execution mode before";
      return false;
    }
  }
  NoteSpan(begin, end, mode);
  return true;
}

const CodeInsn* CodeBlocks::Insn(uint64_t ip, pt_exec_mode mode, std::string& why) {
  const uint64_t key = Key(ip, mode);
  if (auto it = insns_.find(key); it != insns_.end()) return &it->second;
  CodeInsn insn;
  if (!DecodeAt(ip, mode, insn, why)) return nullptr;
  if (!InOneMode(ip, ip + insn.insn.length, mode, why)) return nullptr;
  return &insns_.emplace(key, insn).first->second;
}

const CodeBlock* CodeBlocks::Block(uint64_t ip, pt_exec_mode mode, std::string& why) {
  const uint64_t key = Key(ip, mode);
  Slot& slot = front_[(key ^ (key >> 12) ^ (key >> 24)) & (kFrontSlots - 1)];
  if (slot.key == key) return slot.block;
  if (const BlockSlot& known = BlockSlotOf(key); known.block) {
    slot = Slot{key, known.block};
    return slot.block;
  }
  CodeBlock block;
  block.first_ip = ip;
  uint64_t at = ip;
  // The code is read a window at a time. A read stops where the section visible at its start
  // stops being visible, so each instruction sees the bytes (and section) a read at its own
  // address would: all of the rest of a window that stopped short, else up to
  // pt_max_insn_size (the window is read again from the instruction when fewer are left).
  uint8_t window[4 * pt_max_insn_size];
  int have = 0, pos = 0, isid = 0;
  bool stopped_short = false;
  for (;;) {
    if (have - pos == 0 || (have - pos < static_cast<int>(pt_max_insn_size) && !stopped_short)) {
      have = ReadAt(at, window, sizeof window, isid, why);
      if (have == 0) return nullptr;
      pos = 0;
      stopped_short = have < static_cast<int>(sizeof window);
    }
    const uint8_t* raw = window + pos;
    const int read = std::min(have - pos, static_cast<int>(pt_max_insn_size));
    if (mode == ptem_64bit) {
      // Most instructions are plain moves and arithmetic, whose length is all the block needs
      // (sideband/x86_length.h); Zydis decodes the rest.
      if (const uint8_t length = PlainInsnLength(raw, static_cast<size_t>(read)); length != 0) {
        block.ninsn += 1;
        at += length;
        pos += length;
        continue;
      }
    }
    CodeInsn insn;
    if (!DecodeRead(at, mode, raw, read, isid, insn, why)) return nullptr;
    pos += insn.insn.length;
    block.ninsn += 1;
    block.last_ip = at;
    block.last = insn.insn;
    block.last_isid = insn.isid;
    block.writes_cr3 = block.writes_cr3 || insn.writes_cr3;
    if (insn.insn.kind != X86Kind::kOther) break;
    at += insn.insn.length;
  }
  if (!InOneMode(ip, block.last_ip + block.last.length, mode, why)) return nullptr;
  CodeBlock* added = new (block_memory_.Allocate()) CodeBlock(block);
  BlockSlotOf(key) = BlockSlot{key, added};
  if (block_memory_.size() * 2 > block_table_.size()) GrowBlockTable();
  slot = Slot{key, added};
  return added;
}

void CodeBlocks::GrowBlockTable() {
  ZeroedArray<BlockSlot> old = std::move(block_table_);
  block_table_ = ZeroedArray<BlockSlot>(old.size() * 2, Pages::kFaultedIn);
  for (const BlockSlot& moved : old)
    if (moved.block) BlockSlotOf(moved.key) = moved;
}

std::unique_ptr<CodeGraphPool::Entry> CodeGraphPool::Borrow(
    const std::function<Status(PtImageCache&)>& fill, Status& status) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      // The entry this thread had last, whose graph is in this core's cache, else the one
      // returned last.
      auto it = std::find_if(free_.begin(), free_.end(), [](const std::unique_ptr<Entry>& e) {
        return e->last_user == std::this_thread::get_id();
      });
      if (it == free_.end()) it = free_.end() - 1;
      std::unique_ptr<Entry> entry = std::move(*it);
      free_.erase(it);
      entry->last_user = std::this_thread::get_id();
      status = {};
      return entry;
    }
  }
  auto entry = std::make_unique<Entry>();
  entry->last_user = std::this_thread::get_id();
  status = fill(entry->images);
  return entry;
}

void CodeGraphPool::Return(std::unique_ptr<Entry> entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(entry));
}

}  // namespace ptprof::pt::fast
