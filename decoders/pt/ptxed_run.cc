#include "decoders/pt/ptxed_run.h"

#include <cinttypes>
#include <memory>
#include <string_view>

#include "decoders/pt/flow_config.h"
#include "decoders/pt/flow_decoder.h"
#include "decoders/pt/image_cache.h"
#include "decoders/pt/pevent_queue.h"
#include "decoders/pt/pevent_session.h"
#include "decoders/pt/ptxed_options.h"
#include "decoders/pt/ptxed_printer.h"
#include "decoders/pt/ptxed_sideband.h"
#include "sideband/elf_image.h"
#include "sideband/file_bytes.h"
#include "sideband/image_set.h"

namespace ptprof::pt {

namespace {

int Report(std::FILE* err, int status, const std::string& message) {
  std::fprintf(err, "ptprof: %s\n", message.c_str());
  return status;
}

PtxedPrintOptions PrintOptionsOf(const PtxedRequest& r) {
  PtxedPrintOptions p;
  p.no_inst = r.no_inst;
  p.quiet = r.quiet;
  p.print_offset = r.print_offset;
  p.print_time = r.print_time;
  p.raw_insn = r.raw_insn;
  p.att = r.att;
  p.check = r.check;
  p.event_time = r.event_time;
  p.event_ip = r.event_ip;
  p.show_blocks = r.show_blocks;
  p.stats = r.stats;
  p.stat_insn = r.stat_insn;
  p.stat_blocks = r.stat_blocks;
  return p;
}

// Loads the --pevent files (and the --pevent:kcore kernel) for a decode over `cache`'s sections.
Result<std::unique_ptr<PeventSession>> OpenSideband(const SidebandRequest& request, const PtImageCache& cache,
                                                    std::FILE* out) {
  std::vector<PeventSource> sources;
  for (const PeventFile& file : request.files) {
    auto source = PeventSource::Load(file);
    if (!source) return tl::unexpected(source.error());
    sources.push_back(std::move(*source));
  }
  auto session = std::make_unique<PeventSession>(PeventQueue(std::move(sources)), request, cache.iscache(),
                                                 [out](std::string_view text) {
                                                   std::fwrite(text.data(), 1, text.size(), out);
                                                 });
  for (const std::string& kcore : request.kcore) {
    auto spec = ParseElfImageSpec(kcore);
    if (!spec) return Fail("--pevent:kcore " + spec.error().message);
    ImageSet kernel;
    if (auto st = kernel.AddElf(*spec); !st) return tl::unexpected(st.error());
    for (const ImageSection& section : kernel.sections())
      if (auto st = session->contexts().AddKernelSection(section); !st) return tl::unexpected(st.error());
  }
  return session;
}

}  // namespace

int RunPtxed(const std::vector<std::string>& args, std::FILE* out, std::FILE* err,
             const std::string& version) {
  auto request = ParsePtxedArgs(args);
  if (!request) return Report(err, request.error().usage ? 2 : 1, request.error().message);
  if (request->help) {
    std::fputs(PtxedHelp().c_str(), out);
    return 0;
  }
  if (request->version) {
    std::fprintf(out, "ptprof %s (ptxed-compatible output of libipt %d.%d.%d)\n", version.c_str(),
                 pt_library_version().major, pt_library_version().minor,
                 pt_library_version().patch);
    return 0;
  }

  ImageSet images;
  for (const PtxedImage& image : request->images) {
    size_t before = images.sections().size();
    Status st = image.elf ? images.AddElf(image.elf_spec) : images.AddRaw(image.raw);
    if (!st) return Report(err, 1, st.error().message);
    if (request->verbose && image.elf) {
      // ptxed names each loaded segment with its link-time address.
      auto elf = LoadElfImage(image.elf_spec.file, image.elf_spec.base);
      uint64_t bias = elf ? elf->bias : 0;
      for (size_t i = before; i < images.sections().size(); ++i) {
        const ImageSection& s = images.sections()[i];
        std::fprintf(out, "%s: offset=0x%" PRIx64 " size=0x%" PRIx64 " vaddr=0x%" PRIx64 ".\n",
                     s.file.c_str(), s.file_offset, s.size, s.address - bias);
      }
    }
  }

  auto trace = ReadFileRange(request->pt.file, request->pt.offset, request->pt.size);
  if (!trace) return Report(err, 1, trace.error().message);
  if (trace->empty()) return Report(err, 1, request->pt.file + ": offset 0x0: the trace is empty");

  pt_config config;
  int errata_status = 0;
  if (auto st = FillPtConfig(request->params, request->flow, config, errata_status); !st)
    return Report(err, 1, st.error().message);
  if (errata_status < 0)
    std::fprintf(out, "[0, 0: config error: %s]\n", pt_errstr(pt_errcode(errata_status)));

  PtImageCache cache;
  if (auto st = cache.AddAll(images); !st) return Report(err, 1, st.error().message);

  PtxedPrinter printer(out, PrintOptionsOf(*request), cache);
  FlowDecoder decoder(config, request->flow, *trace, cache);
  Status run;
  if (request->sideband.files.empty()) {
    run = decoder.Run(printer);
  } else {
    auto session = OpenSideband(request->sideband, cache, out);
    if (!session) return Report(err, 1, session.error().message);
    PtxedSideband observer(printer, **session);
    run = decoder.Run(observer);
  }
  if (!run) return Report(err, 1, request->pt.file + ": " + run.error().message);
  if (request->stats) printer.PrintStats();
  std::fflush(out);
  return 0;
}

}  // namespace ptprof::pt
