#include "decoders/etm/etm_decoder.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <exception>
#include <map>
#include <mutex>

#include <opencsd/c_api/opencsd_c_api.h>

#include "decoders/etm/dstream_frames.h"
#include "decoders/etm/element_events.h"
#include "decoders/etm/etm_segments.h"
#include "decoders/etm/library_fault_guard.h"
#include "decoders/etm/ocsd_source_decoder.h"
#include "src/model/decode_defaults.h"

namespace ptprof::etm {

namespace {

// Snapshot memory space names (the snapshot format's spellings, old ones included).
ocsd_mem_space_acc_t MemSpaceOf(const std::string& name) {
  static const std::map<std::string, ocsd_mem_space_acc_t> kSpaces = {
      {"EL1S", OCSD_MEM_SPACE_EL1S}, {"EL1N", OCSD_MEM_SPACE_EL1N}, {"EL2", OCSD_MEM_SPACE_EL2},
      {"EL2N", OCSD_MEM_SPACE_EL2},  {"EL2S", OCSD_MEM_SPACE_EL2S}, {"EL3", OCSD_MEM_SPACE_EL3},
      {"S", OCSD_MEM_SPACE_S},       {"N", OCSD_MEM_SPACE_N},       {"ANY", OCSD_MEM_SPACE_ANY},
      {"H", OCSD_MEM_SPACE_EL2},     {"P", OCSD_MEM_SPACE_EL1N},    {"NP", OCSD_MEM_SPACE_EL1N},
      {"SP", OCSD_MEM_SPACE_EL1S}};
  auto it = kSpaces.find(name);
  return it == kSpaces.end() ? OCSD_MEM_SPACE_ANY : it->second;
}

}  // namespace

Result<BufferFormat> BufferFormatOf(const std::string& name) {
  if (name == "coresight") return BufferFormat::kCoreSightFrames;
  if (name == "dstream_coresight") return BufferFormat::kDstreamFrames;
  if (name == "source_data") return BufferFormat::kSingleSource;
  return Fail("unknown trace buffer format '" + name + "'");
}

struct EtmDecoder::Impl {
  dcd_tree_handle_t tree = C_API_INVALID_TREE_HANDLE;
  BufferFormat format = BufferFormat::kCoreSightFrames;
  EtmDecodeOptions options;
  std::vector<SourceConfig> sources;
  std::map<uint8_t, Protocol> protocol_of_id;
  std::map<uint8_t, int32_t> cpu_of_id;
  // The code OpenCSD reads, through one callback accessor over the whole address space.
  struct Region {
    MemoryImage image;
    uint32_t space;  // ocsd_mem_space_acc_t mask
  };
  std::vector<Region> regions;
  size_t last_region = 0;  // the region the previous read hit: reads cluster
  // Per decode:
  EventSink* sink = nullptr;
  const std::function<void(const std::string&)>* line = nullptr;
  const std::vector<uint8_t>* trace = nullptr;
  std::unique_ptr<ElementTranslator> translator;
  EtmDecodeStats stats;
  // When set, one entry per event passed to the sink: 0x80 | trace ID for an element, 0 for a
  // gap of ptprof's own.
  std::vector<uint8_t>* element_marks = nullptr;
  std::string callback_error;
  // DSTREAM: OpenCSD is given the frames without their FSYNCs (WithoutFsyncs); frame k's bytes
  // lay `fsync_shift[k]` further on in the buffer.
  std::vector<uint64_t> fsync_shift;
  int crashes = 0;  // of libopencsd while this decoder fed it (Recover)

  // The buffer offset of OpenCSD's index `index` (for DSTREAM, in the frames it was given).
  uint64_t BufferOffset(uint64_t index) const {
    if (fsync_shift.empty()) return index;
    const uint64_t frame = std::min<uint64_t>(index / 16, fsync_shift.size() - 1);
    return index + fsync_shift[frame];
  }

  ~Impl() {
    if (tree != C_API_INVALID_TREE_HANDLE) ocsd_destroy_dcd_tree(tree);
  }

  static uint32_t ReadMemory(const void* ctx, const ocsd_vaddr_t address,
                             const ocsd_mem_space_acc_t space, const uint32_t want, uint8_t* out) {
    LibraryCallback ours;
    auto* self = static_cast<Impl*>(const_cast<void*>(ctx));
    const size_t n = self->regions.size();
    for (size_t k = 0; k < n; ++k) {
      size_t i = (self->last_region + k) % n;
      const Region& r = self->regions[i];
      const uint64_t size = r.image.bytes->size();
      if (address < r.image.address || address - r.image.address >= size) continue;
      if ((r.space & static_cast<uint32_t>(space)) == 0) continue;
      self->last_region = i;
      uint64_t offset = address - r.image.address;
      uint32_t count = static_cast<uint32_t>(std::min<uint64_t>(want, size - offset));
      std::memcpy(out, r.image.bytes->data() + offset, count);
      return count;
    }
    return 0;
  }

  bool Wanted(uint8_t id) const { return options.trace_ids.empty() || options.trace_ids.count(id); }

  static ocsd_datapath_resp_t OnElement(const void* ctx, const ocsd_trc_index_t index,
                                        const uint8_t chan, const ocsd_generic_trace_elem* elem) {
    LibraryCallback ours;
    auto* self = static_cast<Impl*>(const_cast<void*>(ctx));
    try {
      // ListPackets on a full decoder: the packets are listed, the elements have nowhere to go.
      if (!self->Wanted(chan) || self->sink == nullptr) return OCSD_RESP_CONT;
      TraceEvent ev = self->translator->Translate(*elem, self->BufferOffset(index), chan);
      ++self->stats.elements;
      if (const auto* b = std::get_if<ExecBlock>(&ev.body)) {
        ++self->stats.ranges;
        self->stats.instructions += b->insns;
      } else if (std::holds_alternative<TraceGap>(ev.body)) {
        ++self->stats.gaps;
      }
      if (self->element_marks) self->element_marks->push_back(0x80 | (chan & 0x7f));
      self->sink->OnEvent(ev);
    } catch (const std::exception& e) {
      self->callback_error = e.what();
      return OCSD_RESP_FATAL_SYS_ERR;
    }
    return OCSD_RESP_CONT;
  }

  static void OnPacket(const void* ctx, const ocsd_datapath_op_t op, const ocsd_trc_index_t index,
                       const void* packet, const uint32_t size, const uint8_t* data, uint8_t id) {
    LibraryCallback ours;
    auto* self = static_cast<Impl*>(const_cast<void*>(ctx));
    if (op != OCSD_OP_DATA || !packet) return;
    try {
      char text[1024] = {};
      auto it = self->protocol_of_id.find(id);
      if (it == self->protocol_of_id.end()) return;
      ocsd_pkt_str(OcsdProtocolOf(it->second), packet, text, sizeof text);
      char head[64];
      std::snprintf(head, sizeof head, "Idx:%" PRIu64 "; ID:%x; [", self->BufferOffset(index),
                    id);
      std::string s = head;
      for (uint32_t i = 0; i < size; ++i) {
        char b[8];
        std::snprintf(b, sizeof b, "0x%02x ", data[i]);
        s += b;
      }
      s += "];\t";
      s += text;
      ++self->stats.elements;
      (*self->line)(s);
    } catch (const std::exception& e) {
      self->callback_error = e.what();
    }
  }

  // Packet monitor callbacks carry no trace ID: one trampoline per ID gives it back.
  template <uint8_t kId>
  static void OnPacketFor(const void* ctx, const ocsd_datapath_op_t op, const ocsd_trc_index_t index,
                          const void* packet, const uint32_t size, const uint8_t* data) {
    OnPacket(ctx, op, index, packet, size, data, kId);
  }

  // Creates the decode tree: a decoder per source, and unless listing packets only, the memory
  // accessor and the element output.
  Status BuildTree() {
    ocsd_dcd_tree_src_t src = format == BufferFormat::kSingleSource ? OCSD_TRC_SRC_SINGLE
                                                                    : OCSD_TRC_SRC_FRAME_FORMATTED;
    // Frames are given whole (a DSTREAM capture's with its FSYNCs taken out: WithoutFsyncs).
    const uint32_t flags =
        format == BufferFormat::kSingleSource ? 0 : OCSD_DFRMTR_FRAME_MEM_ALIGN;
    tree = ocsd_create_dcd_tree(src, flags);
    if (tree == C_API_INVALID_TREE_HANDLE)
      return Fail("OpenCSD: cannot create a decode tree: " + OcsdLastError(OCSD_ERR_FAIL));
    int create = options.packets_only ? OCSD_CREATE_FLG_PACKET_PROC : OCSD_CREATE_FLG_FULL_DECODER;
    if (options.src_addr_n) create |= ETE_OPFLG_PKTDEC_SRCADDR_N_ATOMS;
    for (const SourceConfig& s : sources) {
      Result<uint8_t> id = AddOcsdDecoder(tree, s, create);
      if (!id) return tl::unexpected(id.error());
      protocol_of_id[*id] = s.protocol;
      if (s.cpu >= 0) cpu_of_id[*id] = s.cpu;
    }
    if (!options.packets_only) {
      // One accessor for all memory: images are looked up by our own code, so images from
      // snapshots, ELF files or perf mmaps need nothing more from OpenCSD, and a decode with
      // no image at all reports inaccessible memory instead of failing.
      ocsd_err_t mem = ocsd_dt_add_callback_mem_acc(tree, 0, ~0ull, OCSD_MEM_SPACE_ANY,
                                                    &Impl::ReadMemory, this);
      if (mem != OCSD_OK) return Fail("OpenCSD: cannot attach the memory accessor: " + OcsdLastError(mem));
      ocsd_err_t err = ocsd_dt_set_gen_elem_outfn(tree, &Impl::OnElement, this);
      if (err != OCSD_OK) return Fail("OpenCSD: cannot attach the element output: " + OcsdLastError(err));
    }
    return {};
  }

  // ListPackets: every wanted source's packets to OnPacket.
  void AttachPacketMonitors() {
    using Mon = FnDefPktDataMon;
    static const Mon kTrampolines[128] = {
#define PTPROF_T(n) &Impl::OnPacketFor<n>
#define PTPROF_T8(n) PTPROF_T(n), PTPROF_T(n + 1), PTPROF_T(n + 2), PTPROF_T(n + 3), \
                     PTPROF_T(n + 4), PTPROF_T(n + 5), PTPROF_T(n + 6), PTPROF_T(n + 7)
        PTPROF_T8(0),  PTPROF_T8(8),  PTPROF_T8(16), PTPROF_T8(24), PTPROF_T8(32),  PTPROF_T8(40),
        PTPROF_T8(48), PTPROF_T8(56), PTPROF_T8(64), PTPROF_T8(72), PTPROF_T8(80),  PTPROF_T8(88),
        PTPROF_T8(96), PTPROF_T8(104), PTPROF_T8(112), PTPROF_T8(120),
#undef PTPROF_T8
#undef PTPROF_T
    };
    for (const auto& [id, protocol] : protocol_of_id) {
      if (!Wanted(id)) continue;
      ocsd_dt_attach_packet_callback(tree, id, OCSD_C_API_CB_PKT_MON,
                                     reinterpret_cast<void*>(kTrampolines[id & 0x7f]), this);
    }
  }

  // Feeds the whole buffer; a fatal response becomes a gap (or an error line), the decoders are
  // reset and input resumes at the next frame (formatted) or byte (single source).
  void Feed(const std::vector<uint8_t>& input) {
    stats.bytes = input.size();
    if (format != BufferFormat::kDstreamFrames) return FeedPart(input, 0, input.size(), true);
    std::vector<uint8_t> buffer = WithoutDstreamFooters(input);
    const uint64_t size = buffer.size();
    const std::vector<uint8_t> frames = WithoutFsyncs(buffer, fsync_shift);
    buffer = {};
    FeedRange(frames.data(), 0, frames.size(), true);
    // As before FSYNCs were taken out here: only a buffer that is not whole frames is truncated.
    const uint64_t usable = Usable(size);
    if (usable < size) ReportTruncated(usable, size - usable);
  }

  // 16 for frames: the deformatter takes whole 16-byte frames only, so a buffer cut inside a
  // frame decodes up to its last whole frame and the rest is reported as truncated.
  uint64_t FrameStep() const { return format == BufferFormat::kSingleSource ? 1 : 16; }
  uint64_t Usable(uint64_t size) const { return size / FrameStep() * FrameStep(); }

  // Feeds bytes [begin, end) of `bytes`, up to its last whole frame; when `last`, then the end of
  // the trace and the bytes after the last whole frame as truncated.
  void FeedPart(const std::vector<uint8_t>& bytes, uint64_t begin, uint64_t end, bool last) {
    const uint64_t usable = Usable(bytes.size());
    FeedRange(bytes.data(), begin, std::min(end, usable), last);
    if (last && usable < bytes.size()) ReportTruncated(usable, bytes.size() - usable);
  }

  // Sets up a decode into `to`: fresh counts and translator; `marks` as DecodePiece says.
  void Begin(EventSink& to, std::vector<uint8_t>* marks) {
    stats = {};
    sink = &to;
    line = nullptr;
    element_marks = marks;
    translator = std::make_unique<ElementTranslator>(cpu_of_id);
  }
  void End() {
    sink = nullptr;
    element_marks = nullptr;
  }

  // Feeds bytes [begin, end) of `bytes` (indices are offsets in `bytes`), then the end of the
  // trace when `last` (which flushes what the decoders hold back). A fatal decoder error becomes a
  // gap and the decoders are reset at the next frame (formatted) or byte (single source); a crash
  // inside libopencsd becomes a gap over the rest of its chunk and a new tree (Recover).
  void FeedRange(const uint8_t* bytes, uint64_t begin, uint64_t end, bool last) {
    const GuardHandlers installed;  // once for all the calls below
    uint64_t pos = begin;
    const uint64_t step = FrameStep();
    while (pos < end && tree != C_API_INVALID_TREE_HANDLE) {
      const uint64_t chunk_end = pos + std::min<uint64_t>(end - pos, kGuardedChunk);
      OcsdCall data{tree, OCSD_OP_DATA, pos, static_cast<uint32_t>(chunk_end - pos), bytes + pos};
      if (int fault = Guarded(data)) {
        pos = Recover(fault, pos, chunk_end, end);
        continue;
      }
      if (OCSD_DATA_RESP_IS_WAIT(data.resp)) {
        OcsdCall flush{tree, OCSD_OP_FLUSH};
        if (int fault = Guarded(flush)) {
          pos = Recover(fault, pos + data.used, chunk_end, end);
          continue;
        }
      }
      if (OCSD_DATA_RESP_IS_FATAL(data.resp)) {
        ++stats.fatal_errors;
        uint64_t at = pos + data.used;
        std::string why = callback_error.empty() ? OcsdLastError(OCSD_ERR_FAIL) : callback_error;
        callback_error.clear();
        ReportFatal(BufferOffset(at), why);
        OcsdCall reset{tree, OCSD_OP_RESET, at};
        uint64_t next = (at / step + 1) * step;
        if (int fault = Guarded(reset)) next = Recover(fault, at, next, end);
        pos = next;
        continue;
      }
      if (data.used == 0 && !OCSD_DATA_RESP_IS_WAIT(data.resp)) break;  // no progress: never spin
      pos += data.used;
    }
    if (!last || tree == C_API_INVALID_TREE_HANDLE) return;
    OcsdCall eot{tree, OCSD_OP_EOT};
    if (int fault = Guarded(eot)) Recover(fault, end, end, end);
  }

  // libopencsd is fed this much at a time: a crash inside it loses at most this much trace.
  static constexpr uint64_t kGuardedChunk = 4096;

  // One ocsd_dt_process_data call and what it answered.
  struct OcsdCall {
    dcd_tree_handle_t tree;
    ocsd_datapath_op_t op;
    uint64_t index = 0;
    uint32_t size = 0;
    const uint8_t* data = nullptr;
    uint32_t used = 0;
    ocsd_datapath_resp_t resp = OCSD_RESP_CONT;
  };

  // Makes `call` under the fault guard (library_fault_guard.h): 0, or the signal that a crash
  // inside libopencsd raised (the tree is then unusable).
  static int Guarded(OcsdCall& call) {
    return CallGuarded(
        [](void* p) {
          auto* c = static_cast<OcsdCall*>(p);
          c->resp = ocsd_dt_process_data(c->tree, c->op, c->index, c->size, c->data, &c->used);
        },
        &call);
  }

  // A tree libopencsd crashed in is neither used nor destroyed again: its state is whatever the
  // crash left (destroying a crashed ETMv3 tree freed an invalid pointer, which glibc ends the
  // process for). It is kept where leak checkers still see it, about 45 KB each: a decoder gives
  // up on its buffer after kMaxCrashes of them.
  static void SetAside(dcd_tree_handle_t crashed) {
    static std::mutex mutex;
    static auto* set_aside = new std::vector<dcd_tree_handle_t>;  // reachable, never freed
    std::lock_guard<std::mutex> lock(mutex);
    set_aside->push_back(crashed);
  }
  static constexpr int kMaxCrashes = 64;

  // After libopencsd crashed (signal `fault`) on the trace from `from`: reports a gap up to
  // `resume`, sets the tree aside and builds a new one, which starts unsynchronised as after a
  // reset; returns `resume`. The kMaxCrashes-th crash instead ends the decode of the buffer,
  // whose end is `end` (no tree is left).
  uint64_t Recover(int fault, uint64_t from, uint64_t resume, uint64_t end) {
    ++stats.fatal_errors;
    SetAside(tree);
    tree = C_API_INVALID_TREE_HANDLE;
    const bool last_crash = ++crashes >= kMaxCrashes;
    char what[240];
    if (last_crash)
      std::snprintf(what, sizeof what,
                    "libopencsd crashed (%s) decoding the trace from here, %d times in this "
                    "buffer now: the rest of it (%" PRIu64 " bytes) is not decoded",
                    FaultName(fault), crashes, BufferOffset(end) - BufferOffset(from));
    else if (resume > from)
      std::snprintf(what, sizeof what,
                    "libopencsd crashed (%s) decoding the trace from here; the %" PRIu64
                    " bytes up to offset 0x%" PRIx64 " are skipped and a new decoder goes on",
                    FaultName(fault), BufferOffset(resume) - BufferOffset(from),
                    BufferOffset(resume));
    else
      std::snprintf(what, sizeof what, "libopencsd crashed (%s) at the end of the trace",
                    FaultName(fault));
    callback_error.clear();
    ReportFatal(BufferOffset(from), what);
    if (last_crash) return end;
    protocol_of_id.clear();
    cpu_of_id.clear();
    if (Status built = BuildTree(); !built) {
      if (tree != C_API_INVALID_TREE_HANDLE) ocsd_destroy_dcd_tree(tree);
      tree = C_API_INVALID_TREE_HANDLE;
      ReportFatal(BufferOffset(resume), built.error().message + "; the rest is not decoded");
      return resume;
    }
    if (line) AttachPacketMonitors();
    return resume;
  }

  void ReportTruncated(uint64_t at, uint64_t size) {
    std::string why = "the buffer ends inside a 16-byte frame: " + std::to_string(size) +
                      " byte(s) not decoded";
    if (sink) {
      TraceEvent ev;
      ev.header.offset = at;
      TraceGap g;
      g.reason = GapReason::kTruncated;
      g.detail = why;
      ev.body = g;
      ++stats.gaps;
      if (element_marks) element_marks->push_back(0);
      sink->OnEvent(ev);
    } else if (line) {
      char head[64];
      std::snprintf(head, sizeof head, "offset 0x%" PRIx64 ": ", at);
      (*line)(head + why);
    }
  }

  void ReportFatal(uint64_t at, const std::string& why) {
    char head[96];
    std::snprintf(head, sizeof head, "decoder error at offset 0x%" PRIx64 ": ", at);
    if (sink) {
      TraceEvent ev;
      ev.header.offset = at;
      TraceGap g;
      g.reason = GapReason::kDesync;
      g.detail = head + why;
      ev.body = g;
      ++stats.gaps;
      if (element_marks) element_marks->push_back(0);
      sink->OnEvent(ev);
    } else if (line) {
      (*line)(std::string(head) + why);
    }
  }
};

EtmDecoder::EtmDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EtmDecoder::~EtmDecoder() = default;

Result<std::unique_ptr<EtmDecoder>> EtmDecoder::Create(BufferFormat format,
                                                       const std::vector<SourceConfig>& sources,
                                                       const EtmDecodeOptions& options) {
  try {
    auto impl = std::make_unique<Impl>();
    impl->format = format;
    impl->options = options;
    impl->sources = sources;
    if (Status built = impl->BuildTree(); !built) return tl::unexpected(built.error());
    return std::unique_ptr<EtmDecoder>(new EtmDecoder(std::move(impl)));
  } catch (const std::exception& e) {
    return Fail(std::string("OpenCSD: ") + e.what());
  }
}

Status EtmDecoder::AddMemory(const MemoryImage& image) {
  if (!image.bytes || image.bytes->empty()) return {};
  const uint64_t end = image.address + image.bytes->size();
  const uint32_t space = MemSpaceOf(image.space);
  for (const Impl::Region& r : impl_->regions) {
    const MemoryImage& other = r.image;
    if (other.address == image.address && *other.bytes == *image.bytes) return {};  // same dump again
    const uint64_t other_end = other.address + other.bytes->size();
    if (image.address < other_end && other.address < end && (r.space & space) != 0) {
      char msg[160];
      std::snprintf(msg, sizeof msg, ": memory at 0x%" PRIx64 "-0x%" PRIx64
                    " not added: it overlaps ", image.address, end);
      std::string text = image.where + msg + other.where;
      warnings_.push_back(text);
      return Fail(text);
    }
  }
  impl_->regions.push_back(Impl::Region{image, space});
  return {};
}

EtmDecodeStats EtmDecoder::Decode(const std::vector<uint8_t>& trace, EventSink& sink) {
  const unsigned jobs = DefaultDecodeJobs();
  // STM (software trace) keeps state its events do not show (the current master): one piece.
  const bool has_stm = std::any_of(impl_->sources.begin(), impl_->sources.end(),
                                   [](const SourceConfig& s) { return s.protocol == Protocol::kStm; });
  if (jobs > 1 && !impl_->options.packets_only && !has_stm &&
      impl_->format != BufferFormat::kDstreamFrames) {
    const uint64_t segment = DefaultSegmentBytes();
    std::vector<EtmSegment> plan = PlanEtmSegments(impl_->Usable(trace.size()), segment,
                                                   impl_->FrameStep(), EtmOverlapFor(segment));
    if (plan.size() >= 2) {
      auto* parted = dynamic_cast<PartedSink*>(&sink);
      if (parted && parted->TakesParts()) return DecodeInParts(trace, plan, jobs, *parted);
      return DecodeParallel(trace, plan, jobs, sink);
    }
  }
  impl_->Begin(sink, nullptr);
  try {
    impl_->Feed(trace);
  } catch (const std::exception& e) {
    impl_->ReportFatal(trace.size(), std::string("OpenCSD exception: ") + e.what());
  }
  sink.OnEnd();
  impl_->End();
  return impl_->stats;
}

EtmDecodeStats EtmDecoder::DecodePiece(const std::vector<uint8_t>& trace, uint64_t begin,
                                       uint64_t end, bool last, EventSink& sink,
                                       std::vector<uint8_t>& marks) {
  impl_->Begin(sink, &marks);
  try {
    impl_->FeedPart(trace, begin, end, last);
  } catch (const std::exception& e) {
    ++impl_->stats.fatal_errors;  // a piece with an error is not stitched (DecodeParallel)
    impl_->ReportFatal(end, std::string("OpenCSD exception: ") + e.what());
  }
  impl_->End();
  return impl_->stats;
}

EtmDecodeStats EtmDecoder::DecodeOn(const std::vector<uint8_t>& trace, uint64_t begin,
                                    uint64_t end, bool last, EventSink& sink,
                                    std::vector<uint8_t>& marks) {
  impl_->sink = &sink;
  impl_->element_marks = &marks;
  try {
    impl_->FeedPart(trace, begin, end, last);
  } catch (const std::exception& e) {
    ++impl_->stats.fatal_errors;
    impl_->ReportFatal(end, std::string("OpenCSD exception: ") + e.what());
  }
  impl_->End();
  return impl_->stats;
}

uint64_t EtmDecoder::fatal_errors() const { return impl_->stats.fatal_errors; }

Result<std::unique_ptr<EtmDecoder>> EtmDecoder::Clone() const {
  auto clone = Create(impl_->format, impl_->sources, impl_->options);
  if (!clone) return clone;
  (*clone)->impl_->regions = impl_->regions;
  return clone;
}

EtmDecodeStats EtmDecoder::ListPackets(const std::vector<uint8_t>& trace,
                                       const std::function<void(const std::string&)>& line) {
  impl_->stats = {};
  impl_->sink = nullptr;
  impl_->line = &line;
  try {
    impl_->AttachPacketMonitors();
    impl_->Feed(trace);
  } catch (const std::exception& e) {
    impl_->ReportFatal(trace.size(), std::string("OpenCSD exception: ") + e.what());
  }
  impl_->line = nullptr;
  return impl_->stats;
}

}  // namespace ptprof::etm
