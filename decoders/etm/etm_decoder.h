#pragma once
// EtmDecoder answers "what did the traced cores execute, according to this CoreSight trace
// buffer?": one OpenCSD decode tree over a buffer (frame-formatted, DSTREAM-framed or a single
// unformatted source) with a decoder per trace source and memory images for the traced code.
// It emits the model's events (see ElementTranslator) or a packet listing. OpenCSD errors and
// exceptions end here: a fatal decoder error becomes a TraceGap and decoding resumes after it.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "decoders/etm/source_config.h"
#include "src/model/event_sink.h"
#include "src/model/parted_sink.h"
#include "src/model/result.h"

namespace ptprof::etm {

struct EtmSegment;   // etm_segments.h
class EventPasser;   // event_passer.h

// Code bytes at an address, e.g. a snapshot [dump] or a perf mmap of a binary.
struct MemoryImage {
  uint64_t address = 0;
  std::string space;  // snapshot memory space name ("EL1N", "S", ...), empty for any
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  std::string where;  // for messages, e.g. "cpu_0.ini:[dump1]"
};

enum class BufferFormat { kCoreSightFrames, kDstreamFrames, kSingleSource };
// "coresight", "dstream_coresight", "source_data".
Result<BufferFormat> BufferFormatOf(const std::string& name);

struct EtmDecodeOptions {
  bool packets_only = false;  // packet processors only (dump), no memory needed
  bool src_addr_n = false;    // ETE/ETMv4: split ranges at N atoms (trc_pkt_lister -src_addr_n)
  std::set<uint8_t> trace_ids;  // emit only these trace IDs; empty: all
};

struct EtmDecodeStats {
  uint64_t bytes = 0;
  uint64_t elements = 0;
  uint64_t ranges = 0;
  uint64_t instructions = 0;
  uint64_t gaps = 0;
  uint64_t fatal_errors = 0;
  // A parallel decode (--jobs over 1, etm_segments.h): the pieces, how many joined their
  // predecessor, and why the rest was decoded in one piece, if it was.
  uint64_t segments = 0;
  uint64_t joined = 0;
  std::string sequential_because;
  // Pieces that did not join, decoded again in one piece with the one before them (etm_stretch.h),
  // and the first reason.
  uint64_t stretched = 0;
  std::string stretched_because;
  // In parts (a consumer that takes its stream in parts, src/model/parted_sink.h): the consumer's
  // parts folded, and those it could not fold, whose events it took directly, decoded again
  // (with the first reason).
  uint64_t parts = 0;
  uint64_t parts_redone = 0;
  std::string redone_because;
  // Where the rest was decoded in one piece for such a consumer: the parts of it that the
  // consumer took on a second thread (src/model/part_pipe.h), folded and refused, and whether
  // it took the rest directly because its work was found light.
  uint64_t rest_parts = 0;
  uint64_t rest_parts_refused = 0;
  bool rest_consumer_light = false;
};

// How a Decode went, for --verbose: "decoded in one piece", or in how many segments, how many
// joined and why the rest was decoded in one piece.
std::string HowDecoded(const EtmDecodeStats& stats);

class EtmDecoder {
 public:
  static Result<std::unique_ptr<EtmDecoder>> Create(BufferFormat format,
                                                    const std::vector<SourceConfig>& sources,
                                                    const EtmDecodeOptions& options);
  ~EtmDecoder();
  EtmDecoder(const EtmDecoder&) = delete;
  EtmDecoder& operator=(const EtmDecoder&) = delete;

  // Makes `image` readable by the decoders (the bytes are shared, not copied). An image
  // overlapping one already added in the same memory space is refused with an error naming both
  // (the caller decides whether that is fatal); the very same image again is ignored.
  Status AddMemory(const MemoryImage& image);

  // Decodes `trace` into events for `sink` (then calls sink.OnEnd()). With more than one job
  // (DefaultDecodeJobs, src/model/decode_defaults.h) and a frame-formatted or single-source buffer of two segments or
  // more with no STM source, pieces are decoded on several threads and stitched
  // (etm_segments.h): the same events.
  EtmDecodeStats Decode(const std::vector<uint8_t>& trace, EventSink& sink);

  // Feeds bytes [begin, end) of `trace` (end clamped to its last whole frame) to this decoder,
  // which must be fresh (a reset tree reports "no sync" differently), then the end of the trace
  // when `last`. `marks` gets 0x80 | trace ID per element event, 0 per gap of ptprof's own.
  // Does not call OnEnd().
  EtmDecodeStats DecodePiece(const std::vector<uint8_t>& trace, uint64_t begin, uint64_t end,
                             bool last, EventSink& sink, std::vector<uint8_t>& marks);

  // Feeds bytes [begin, end) of `trace` on to this decoder after the DecodePiece (or DecodeOn)
  // that ended at `begin`: the same decode carries on, as if fed in one call. The counts it
  // returns are those of the whole decode.
  EtmDecodeStats DecodeOn(const std::vector<uint8_t>& trace, uint64_t begin, uint64_t end,
                          bool last, EventSink& sink, std::vector<uint8_t>& marks);

  // The decoder errors of the decode under way or last made (DecodePiece, DecodeOn) so far.
  uint64_t fatal_errors() const;

  // Lists the packets of `trace`: one line per packet, "Idx:<offset>; ID:<hex id>; [<bytes>];\t<packet>",
  // and a line per fatal error.
  EtmDecodeStats ListPackets(const std::vector<uint8_t>& trace,
                             const std::function<void(const std::string&)>& line);

  // What AddMemory refused, one line each.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Impl;
  explicit EtmDecoder(std::unique_ptr<Impl> impl);
  // Another decoder of the same sources, options and memory (one per thread).
  Result<std::unique_ptr<EtmDecoder>> Clone() const;
  // Decode on several threads along `plan` (etm_parallel_decode.cc).
  EtmDecodeStats DecodeParallel(const std::vector<uint8_t>& trace,
                                const std::vector<EtmSegment>& plan, unsigned jobs,
                                EventSink& sink);
  // The same for a consumer that takes its stream in parts: each piece's events go to a part of
  // it on the thread that decodes the piece (etm_parted_decode.cc).
  EtmDecodeStats DecodeInParts(const std::vector<uint8_t>& trace,
                               const std::vector<EtmSegment>& plan, unsigned jobs,
                               PartedSink& sink);
  // Bytes [begin, end) of `trace` decoded again by a fresh decoder into `pass`, which passes on
  // its events numbered [skip, until) (the end of the trace after them when `last`); its
  // decoder errors are added to `total`. An error when no decoder can be made.
  Status DecodeAgain(const std::vector<uint8_t>& trace, uint64_t begin, uint64_t end, bool last,
                     EventPasser& pass, size_t skip, size_t until, EtmDecodeStats& total) const;
  // The two decodes in pieces' joins, stretches and decode of the rest (etm_piece_joins.h),
  // which clone this decoder and decode again with it.
  friend class PieceJoins;
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> warnings_;
};

}  // namespace ptprof::etm
