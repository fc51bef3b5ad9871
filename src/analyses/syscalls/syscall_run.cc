#include "src/analyses/syscalls/syscall_run.h"

#include "sideband/x86_insn.h"
#include "src/analyses/syscalls/user_syscall_number.h"
#include "src/pipeline/decode_streams.h"

namespace ptprof::syscalls {

namespace {

// Nanoseconds of an event: its own, else its TSC at the nominal frequency (nom_freq x 100 MHz).
std::function<std::optional<uint64_t>(const EventHeader&)> TimeOf(const Session& session) {
  const unsigned nom_freq = session.params().nom_freq;
  return [nom_freq](const EventHeader& h) -> std::optional<uint64_t> {
    if (h.time_ns != kUnknownTime) return h.time_ns;
    if (h.tsc != kUnknownTime && nom_freq) return h.tsc * 10 / nom_freq;
    return std::nullopt;
  };
}

// Notes whether the blocks that pass through carry time (a TSC, and a clock for ns). In parts
// when the builder after it takes parts.
class TimeSeenSink : public PartedSink {
 public:
  explicit TimeSeenSink(CallStackBuilder& next) : next_(next) {}
  void OnEvent(const TraceEvent& event) override {
    if (std::holds_alternative<ExecBlock>(event.body)) {
      has_time_ns |= event.header.time_ns != kUnknownTime;
      has_tsc |= event.header.tsc != kUnknownTime;
    }
    next_.OnEvent(event);
  }
  void OnBlocks(const BlockBatch& batch) override {
    if (!has_time_ns) {  // once a block had both, nothing more can change
      bool any_tsc = false;
      for (size_t i = 0; i < batch.blocks.size() && !any_tsc; ++i)
        any_tsc = batch.blocks[i].tsc != kUnknownTime;
      has_tsc |= any_tsc;
      has_time_ns |= batch.clock && any_tsc;
    }
    next_.OnBlocks(batch);
  }
  void OnEnd() override { next_.OnEnd(); }
  bool has_time_ns = false;
  bool has_tsc = false;

  std::unique_ptr<EventSink> NewPart() const override { return Over(next_.NewPart()); }
  std::unique_ptr<EventSink> NewFirstPart() const override { return Over(next_.NewFirstPart()); }
  std::string Refusal(const EventSink& part) const override {
    return next_.Refusal(*static_cast<const TimeSeenSink&>(part).owned_);
  }
  void Fold(std::unique_ptr<EventSink> part) override {
    auto& seen = static_cast<TimeSeenSink&>(*part);
    has_time_ns |= seen.has_time_ns;
    has_tsc |= seen.has_tsc;
    next_.Fold(std::move(seen.owned_));
  }
  bool TakesParts() const override { return next_.TakesParts(); }

 private:
  // The same over a part of the builder, which it owns.
  static std::unique_ptr<EventSink> Over(std::unique_ptr<EventSink> builder_part) {
    auto part = std::make_unique<TimeSeenSink>(static_cast<CallStackBuilder&>(*builder_part));
    part->owned_ = std::move(builder_part);
    return part;
  }
  std::unique_ptr<EventSink> owned_;
  CallStackBuilder& next_;
};

}  // namespace

Result<SyscallRun> RunSyscalls(const Session& session, const std::vector<size_t>& selected,
                               const std::string& where, const DecodeStreamsOptions& decode) {
  const X86Decoder decoder;
  const ImageSet& images = session.images;
  SyscallTracker tracker(SyscallArch::kX86_64, [&images, &decoder](uint64_t first, uint64_t ip) {
    return UserSyscallNumber(images, decoder, first, ip);
  });
  CallStackBuilder builder({&images.symbols(), TimeOf(session)});
  builder.AddObserver(&tracker);
  TimeSeenSink time_seen(builder);

  SyscallRun run;
  const auto outcomes = DecodeStreams(session, selected, decode, time_seen);
  for (const StreamOutcome& outcome : outcomes) {
    const archive::StreamEntry& stream = session.manifest.streams[outcome.stream];
    const bool named = stream.name != "raw";
    const std::string stream_where = named ? where + ": stream " + stream.name : where;
    if (!outcome.summary) {
      if (!named) return Fail(stream_where + ": " + outcome.error);
      run.warnings.push_back(stream_where + ": " + outcome.error);
      continue;
    }
    run.instructions += outcome.summary->insns;
    run.decode_notes.push_back(stream_where + ": " + DescribeDecode(*outcome.summary));
    if (!outcome.summary->has_psb) {
      if (!named) return Fail(stream_where + ": offset 0x0: no PSB found: not an Intel PT trace");
      run.warnings.push_back(stream_where + ": offset 0x0: no PSB found");
    }
  }
  builder.OnEnd();
  tracker.Finish();
  run.instances = std::move(tracker.instances());
  run.counts = tracker.counts();
  run.repairs = builder.repairs();
  run.blocks = builder.blocks();
  run.tree = builder.TakeMerged();
  run.timed = time_seen.has_time_ns || (time_seen.has_tsc && session.params().nom_freq != 0);
  return run;
}

Result<SyscallRun> RunSyscallsOnInput(const std::string& input, const RawInputOptions& options,
                                      bool options_given, const std::vector<std::string>& streams) {
  auto session = OpenSession(input, options, options_given);
  if (!session) return tl::unexpected(session.error());
  auto selected = SelectStreams(*session, streams);
  if (!selected) return tl::unexpected(selected.error());
  auto run = RunSyscalls(*session, *selected, input);
  if (!run) return run;
  run->warnings.insert(run->warnings.begin(), session->warnings.begin(), session->warnings.end());
  return run;
}

}  // namespace ptprof::syscalls
