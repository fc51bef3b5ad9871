#pragma once
// FastFlowDecoder answers the flow decoder's question ("what did the traced CPU execute?") with
// ptprof's own block walker: it asks ptprof's own query decoder (fast/query_decoder.h: packets,
// time, events, offsets exactly as libipt's query decoder gives them) and moves through the code
// with a memoised control-flow graph (fast/code_blocks.h), each run of code decoded once, instead
// of libipt's block decoder. It reports to the same
// FlowObserver as FlowDecoder, and what it reports is what FlowDecoder's block decode reports
// once FlowToModel has joined contiguous blocks: the same blocks, counts, times and offsets.
//
// It handles the packets and events of ordinary traces (PSB+, TNT, TIP, TIP.PGE/PGD, FUP
// interrupts and disables, MODE.exec, MODE.TSX, OVF, power, timing). For anything else (paging,
// VMCS, PTWRITE, EXSTOP and MWAIT events, errata workarounds, decode errors, code it cannot read)
// it stops and says what it met, so that the caller decodes that piece with libipt instead.
#include <intel-pt.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <span>
#include <vector>

#include "decoders/pt/fast/code_blocks.h"
#include "decoders/pt/fast/query_decoder.h"
#include "decoders/pt/fast/tnt_runs.h"
#include "decoders/pt/flow_observer.h"
#include "decoders/pt/tsc_span.h"

namespace ptprof::pt::fast {

struct FastFlowOutcome {
  bool handled = true;  // false: what was reported must be dropped, `why` says why
  std::string why;
  uint64_t why_offset = 0;         // the trace offset it stopped at
  bool synced = false;             // found a PSB
  bool stopped_untrusted = false;  // stopped early past `trust_end` (see Run)
};

class FastFlowDecoder {
 public:
  // `config` as for libipt's block decoder (FillPtConfig), without a buffer; `trace` and `code`
  // must outlive Run(). `code` (over the images the trace ran) may be shared by the decodes of
  // several pieces of one trace, one at a time: what one decoded, the next reuses.
  FastFlowDecoder(const pt_config& config, std::span<const uint8_t> trace, CodeBlocks& code);
  ~FastFlowDecoder();
  FastFlowDecoder(const FastFlowDecoder&) = delete;
  FastFlowDecoder& operator=(const FastFlowDecoder&) = delete;

  // Asked where FlowDecoder asks its ImageSwitchHook (before each block, and after each event is
  // read, with the event's time when it has one), but not again while the time stays where it
  // said the answer holds: the code to read from now on (the code graph of another address
  // space), or null to keep the current one. Its answer must depend on the time alone (the task
  // running then), so that not asking again changes nothing. `same` (when `tsc` is known;
  // `tsc` alone unless the hook widens it): the times around `tsc` at which it would switch
  // nothing more. Set it before Run().
  using CodeSwitchHook =
      std::function<CodeBlocks*(std::optional<uint64_t> tsc, uint64_t offset, TscSpan& same)>;
  // With it, `would_switch`: whether the hook, asked at `tsc`, would switch anything (asked
  // without its effects, where the decoder must not switch yet: a TNT packet's bits that came
  // with a new time are taken by a run whole when the task stays); `same` as for the hook, where
  // it would not.
  using WouldSwitchHook = std::function<bool(std::optional<uint64_t> tsc, TscSpan& same)>;
  void SetCodeSwitchHook(CodeSwitchHook hook, WouldSwitchHook would_switch = {}) {
    code_switch_ = std::move(hook);
    would_switch_ = std::move(would_switch);
  }

  // Decodes to the end of the trace. Something it does not handle before `trust_end` (an offset
  // in `trace`) makes the outcome unhandled; at or after it, the decode just stops there (the
  // caller trusts nothing from there on).
  FastFlowOutcome Run(FlowObserver& observer, uint64_t trust_end = UINT64_MAX);

 private:
  // The instructions walked since the block began: [ip, end_ip], ninsn of them.
  struct Walk {
    uint64_t ip = 0;
    uint64_t end_ip = 0;
    uint64_t ninsn = 0;
    int isid = 0;
    pt_exec_mode mode = ptem_unknown;
    bool speculative = false;
    const X86Insn* last = nullptr;  // the instruction at end_ip (the caches never move it)
  };

  // --- libipt's block decoder, rule for rule (fast_flow.cc) ---
  int Unsupported(std::string why);
  int BlkStatus(int flags) const {
    if (!enabled_) flags |= pts_ip_suppressed;
    if ((status_ & pts_eos) && !process_event_) flags |= pts_eos;
    return flags;
  }
  int FetchEvent();
  int SyncForward();
  int Next(Walk& walk);
  int Event(pt_event& out);
  int Proceed(Walk& walk);
  int ProceedEvent(Walk& walk);
  int ProceedTrailingEvent(bool after_block);
  // What libipt returns after a block: the trailing event, if one waits, else the status.
  int AfterBlock() {
    return (status_ & pts_event_pending) ? ProceedTrailingEvent(true) : BlkStatus(0);
  }
  int ProceedOneInsn(Walk& walk, const CodeInsn*& insn);
  int ProceedToIp(Walk& walk, uint64_t ip, const CodeInsn*& last);
  int ProceedToCr3Write(Walk& walk, const CodeInsn*& last);
  int ProceedToIpWithTrace(Walk& walk, uint64_t ip);
  int NextIpWithoutTrace(uint64_t insn_ip, const X86Insn& insn);
  void LogCall(uint64_t insn_ip, const X86Insn& insn) {
    if (PushesReturn(insn)) PushReturn(insn_ip + insn.length);
  }
  void SetDisableResumeIp(uint64_t insn_ip, const X86Insn& insn);
  // Passes the block walked (if any) on; returns the decoder's offset after it.
  uint64_t EmitWalk(FlowObserver& observer, const Walk& walk, uint64_t offset);

  // --- the return stack ---
  void PushReturn(uint64_t ip) { returns_.Push(ip); }
  bool ReturnStackEmpty() const { return returns_.Empty(); }
  // The top of the return stack as a run's key may hold it (its two top addresses).
  CallerTops Caller() const { return returns_.Caller(); }
  uint64_t PopReturn() { return returns_.Pop(); }
  // The return stack operations of a run, in order, as its calls and returns made them (inline:
  // the steady loop replays them for every run, most of which have none or a few).
  void ReplayReturns(const uint64_t* ops, uint32_t count) {
    for (const uint64_t* op = ops; op != ops + count; ++op) {
      if (*op == TntRun::kPop) PopReturn();
      else PushReturn(*op);
    }
  }

  // --- the next block, known from the graph ---
  void SetNextBlock(const CodeBlock* block) {
    next_block_ = block;
    next_mode_ = mode_;
    next_code_ = code_;
  }
  // The block at ip_, when the last block's edge led there and nothing has changed since.
  const CodeBlock* KnownNextBlock() const {
    return next_block_ && next_block_->first_ip == ip_ && next_mode_ == mode_ &&
                   next_code_ == code_
               ? next_block_
               : nullptr;
  }

  // --- the plain walk, and the inner loop that passes plain blocks and TNT runs straight to
  // the model (fast_flow_plain.cc) ---
  int NextPlain(Walk& walk);
  int ProceedNoEvent(Walk& walk);
  int ProceedWithTrace(uint64_t insn_ip, const X86Insn& insn);
  int RunPlain(FlowToModel& model, Walk& walk, uint64_t& offset);
  // Whether, after a block that returned `status`, Run would walk the next one plainly too.
  bool GoesOnPlain(int status) const {
    return status == 0 && !process_event_ && !(status_ & pts_event_pending) && enabled_;
  }
  enum class RunStep { kTaken, kNone, kReturn };
  RunStep TakeTntRun(FlowToModel& model, TntRuns& runs, Walk& walk, uint64_t& offset,
                     int& status);
  // After TakeTntRun took a run and the walk goes on from its end: the runs after it, for as
  // long as they are what TakeTntRun would take in its simplest case (fast_flow_steady.cc).
  // kTaken, or kReturn with `walk` and `status` as TakeTntRun gives them when reading the next
  // TNT packet fails.
  RunStep TakeSteadyRuns(FlowToModel& model, TntRuns& runs, Walk& walk, uint64_t& offset,
                         int& status);
  // The loop itself, made twice: following tasks (kTasks) and not, so that the checks the tasks
  // need cost the other nothing.
  template <bool kTasks>
  RunStep SteadyRuns(FlowToModel& model, TntRuns& runs, Walk& walk, uint64_t& offset,
                     int& status);
  // TakeTntRun's answer when the TNT packet for `block` (at ip_, ending in a conditional branch
  // or, when `returns`, a return) could not be read: `refilled`.
  RunStep RefillFailed(FlowToModel& model, const CodeBlock* block, bool returns, int refilled,
                       Walk& walk, uint64_t& offset, int& status);
  // For a block whose branch a TIP decides, walked from `start`: its call pushed, then the TIP
  // asked for, as the plain walk asks it. kTaken when the walk goes on plainly (ip_ the target),
  // else kReturn with the block handed back in `walk` and the TIP's answer in `status`.
  RunStep AskTip(const CodeBlock& block, uint64_t start, Walk& walk, int& status);
  // Starts loading `run` (likely the next one) while the current one is copied: its header and
  // its first blocks.
  static void Prefetch(const TntRun* run) {
    if (!run) return;
    const char* at = reinterpret_cast<const char*>(run);
    for (int line = 0; line < 6; ++line) __builtin_prefetch(at + 64 * line);
  }
  // The key's state for the TNT bits there now: those pending, else (`fresh`) those of the
  // TNT-8 packet that comes next, read from its byte; none (not `keyed`) when no such packet
  // comes next.
  struct BitsKey {
    bool fresh = false;
    bool keyed = false;
    uint64_t state = 0;
  };
  BitsKey KeyOfBits() const {
    BitsKey key;
    key.fresh = !qry_->HasTntBits();
    key.keyed = !key.fresh || qry_->Tnt8Next();
    if (key.keyed)
      key.state =
          key.fresh
              ? TntRuns::Tnt8State(qry_->NextTnt8(), speculative_)
              : TntRuns::State(qry_->PendingBitValues(), qry_->PendingBits(), speculative_);
    return key;
  }
  // After `run` was taken (its bits and return stack operations): starts loading the run likely
  // to come next, the follow whose key's state is that of the bits now there, else the table's
  // slot for that key (a run that ends in a TIP: its latest follow). The loop's next turn works
  // the key out again: carrying it there took more instructions (stop 42: sort 3,464 M against
  // 3,359 M).
  void PrefetchNext(const TntRuns& runs, const TntRun& run) const {
    if (run.ends_in_tip || !run.all.next) return Prefetch(run.follow());
    const BitsKey key = KeyOfBits();
    if (!key.keyed) return;
    if (const TntRun* next = run.FollowWithState(key.state)) return Prefetch(next);
    runs.PrefetchSlot(run.all.next, key.state, run.next_returns, Caller());
  }
  // The tsc blocks are stamped with now (kUnknownTime when the time is not known).
  uint64_t StampTsc() const { return time_known_ ? time_tsc_ : kUnknownTime; }
  RunStep TakeTipBlock(FlowToModel& model, const CodeBlock* block, Walk& walk, uint64_t& offset,
                       int& status);
  // Asks the trace where the branch that ends the block at `last_ip` went (into ip_): what
  // NextPlain returns for such a block. Inline: the steady loop asks it at every TIP.
  [[gnu::always_inline]] int TipAfterBlock(uint64_t last_ip) {
    ip_ = last_ip;
    const int tip = qry_->IndirectBranch(&ip_);
    if (tip < 0) return tip;
    status_ = tip;
    if (tip & pts_ip_suppressed) return -pte_noip;
    return AfterBlock();
  }
  void SetWalk(Walk& walk, const CodeBlock& block, uint64_t ip) const;
  [[gnu::always_inline]] inline RunStep TakeRunPart(FlowToModel& model, const TntRun& run,
                                                    const RunStop& stop, uint64_t& offset,
                                                    uint64_t after);
  RunStep Continue(const TntRun& run, const CodeBlock* next, uint64_t& offset, uint64_t after);
  RunStep HandBack(FlowToModel& model, const TntRun& run, const RunStop& stop, Walk& walk,
                   uint64_t& offset, uint64_t after, int result, int& status);
  // The decoder's time now (libipt's pt_blk_time), when it has one.
  std::optional<uint64_t> TimeNow() const {
    uint64_t tsc = 0;
    if (qry_->Time(&tsc) < 0) return std::nullopt;
    return tsc;
  }
  // Asks the code switch hook at time `tsc` (for the block at `offset`), unless the time is
  // where it last said asking again switches nothing. True when it switched the code.
  bool SwitchCodeAt(std::optional<uint64_t> tsc, uint64_t offset) {
    if (Asked(tsc)) return false;
    TscSpan same = tsc ? TscSpan::At(*tsc) : TscSpan{};
    CodeBlocks* code = code_switch_(tsc, offset, same);
    NoteAsked(tsc, same);
    if (!code) return false;
    code_ = code;
    return true;
  }
  // Whether the hook, asked now, might switch the code: the time has left where it said it
  // would switch nothing, and (when the decoder can ask without switching) another task runs at
  // the new time. Where it would switch nothing, it counts as asked.
  bool TaskMayChange() {
    const std::optional<uint64_t> tsc = TimeNow();
    if (Asked(tsc)) return false;
    if (!would_switch_) return true;
    TscSpan same = tsc ? TscSpan::At(*tsc) : TscSpan{};
    if (would_switch_(tsc, same)) return true;
    NoteAsked(tsc, same);
    return false;
  }
  // Whether asking the hook at `tsc` would switch nothing (see asked_span_).
  bool Asked(std::optional<uint64_t> tsc) const {
    return tsc ? asked_span_.Holds(*tsc) : asked_none_;
  }
  void NoteAsked(std::optional<uint64_t> tsc, TscSpan same) {
    asked_none_ = !tsc;
    asked_span_ = !tsc ? TscSpan{} : same.Holds(*tsc) ? same : TscSpan::At(*tsc);
  }

  // The time at `offset` into time_known_ and time_tsc_ (the query decoder's time changes only
  // with the packets it reads, which move its offset: at the offset it was last asked at, the
  // answer is the same).
  void UpdateTime(uint64_t offset) {
    if (offset == time_offset_) return;
    uint64_t tsc = 0;
    time_known_ = qry_->Time(&tsc) >= 0;
    time_tsc_ = tsc;
    time_offset_ = offset;
  }

  pt_config config_;
  std::unique_ptr<QueryDecoder> qry_;
  CodeBlocks* code_;
  CodeSwitchHook code_switch_;
  WouldSwitchHook would_switch_;
  // Where asking the hook again would switch nothing, from its last answer (SwitchCodeAt,
  // TaskMayChange): the times in asked_span_, or no time (before the first timing packet) when
  // asked_none_. Nowhere at the start of Run.
  TscSpan asked_span_;
  bool asked_none_ = false;
  // Following tasks: the bits pending came with a time the hook was not asked at, and the block
  // that takes the first of them is walked before it is (RunPlain).
  bool walk_one_first_ = false;
  std::string why_;

  // The state libipt's block decoder keeps, with the same meaning.
  uint64_t ip_ = 0;
  pt_exec_mode mode_ = ptem_unknown;
  int status_ = 0;
  bool enabled_ = false;
  bool process_event_ = false;
  bool speculative_ = false;  // inside a transaction (TSX)
  pt_event event_{};
  // The return stack for compressed returns: 64 entries, the oldest overwritten.
  ReturnStack returns_;
  // The decoder's time as last asked at offset time_offset_ (UpdateTime); UINT64_MAX: ask again.
  uint64_t time_offset_ = UINT64_MAX;
  uint64_t time_tsc_ = 0;
  bool time_known_ = false;
  // The block at ip_ when the last block's edge led there (ProceedNoEvent checks it still is).
  const CodeBlock* next_block_ = nullptr;
  pt_exec_mode next_mode_ = ptem_unknown;
  const CodeBlocks* next_code_ = nullptr;
  // The TNT run just taken, when the walk went on from its end without anything between, and the
  // block it ends at.
  const TntRun* last_run_ = nullptr;
  const CodeBlock* previous_next_ = nullptr;
};

}  // namespace ptprof::pt::fast
