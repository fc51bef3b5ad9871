#pragma once
// Session answers "what is there to decode, and with what?" for every command, whatever the input:
// the trace streams with their bytes, the PT parameters, the code images (loaded, with where their
// bytes are on this machine) and the sideband, all described by one archive::Manifest, the same
// description a .ptar stores. A raw PT trace with --elf/--raw images and PT options opens into a
// session with one stream called "raw"; a .ptar opens into the session it was made from, with
// its images extracted to a private temporary directory that lives as long as the session.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "decoders/pt/pt_params.h"
#include "sideband/image_set.h"
#include "sideband/image_spec.h"
#include "sideband/shared_bytes.h"
#include "src/archive/manifest.h"
#include "src/model/result.h"
#include "src/pipeline/input_kind.h"

namespace ptprof {

// A raw PT trace's companions as the command line gives them: images in command-line order (a
// later image hides what it overlaps), PT parameters, and optional sideband files.
struct RawInputOptions {
  std::vector<std::variant<ElfImageSpec, RawImageSpec>> images;
  pt::PtParams params;
  std::string kallsyms;  // a copy of /proc/kallsyms, or empty
  // perf.data inputs: where their binaries are (see FindBinary in session_perf_data.h).
  std::string symfs;        // a root the recorded paths are looked up under, or empty
  std::string buildid_dir;  // perf's build-id cache (~/.debug layout), or empty
  std::string kcore_dir;    // perf.data: perf record --kcore's kcore_dir (kcore, kallsyms), or empty
  bool load_images = true;  // perf.data: false when only packets are read (no binaries needed)
};

// Where the bytes of one image are on this machine.
struct ImageSource {
  std::string file;
  uint64_t offset = 0;  // of the image's first byte in `file`
};

// A private temporary directory, removed with its contents when the last session using it goes.
class ExtractedFiles {
 public:
  static Result<std::shared_ptr<ExtractedFiles>> Create();
  ~ExtractedFiles();
  ExtractedFiles(const ExtractedFiles&) = delete;
  ExtractedFiles& operator=(const ExtractedFiles&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  explicit ExtractedFiles(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

struct SessionTasks;  // session_tasks.h

struct Session {
  std::string input;  // the path that was opened
  InputKind kind = InputKind::kUnknown;
  archive::Manifest manifest;                      // streams, images, sideband, parameters
  // Parallel to manifest.streams: a raw trace or a perf.data is mapped, not read (SharedBytes).
  std::vector<SharedBytes> stream_bytes;
  std::vector<ImageSource> image_sources;          // parallel to manifest.images
  std::vector<std::vector<uint8_t>> sideband_bytes;  // parallel to manifest.sideband
  ImageSet images;                                 // every image, loaded in manifest order
  std::shared_ptr<ExtractedFiles> extracted;       // keeps extracted archive members alive
  std::vector<std::string> warnings;  // what opening noticed (binaries not found), one line each
  // Who ran when, with which code (perf.data sideband); null: every stream reads `images`.
  std::shared_ptr<const SessionTasks> tasks;

  const pt::PtParams& params() const { return manifest.pt; }
};

// Adds the text symbols of a copy of /proc/kallsyms (`text`, read from `name`) to the session's
// images; text that holds no symbols becomes a warning.
void AddKallsymsSymbols(const std::vector<uint8_t>& text, const std::string& name,
                        Session& session);

// A raw PT trace file with its companions. Errors name the file (trace, image or sideband).
Result<Session> OpenRawSession(const std::string& trace_file, const RawInputOptions& options);

// A raw PT trace (with `options`), a perf.data (file or pipe mode: its parameters come from the
// file; only options.symfs and options.buildid_dir apply) or a .ptar (which must come without
// options: it carries its own images and parameters; `options_given` says whether the user gave
// any). Other input kinds are an error naming the file and saying what it is.
Result<Session> OpenSession(const std::string& input, const RawInputOptions& options,
                            bool options_given);

// The indices of the streams called `names` (every stream when `names` is empty), in session
// order. An unknown name is an error listing the streams there are.
Result<std::vector<size_t>> SelectStreams(const Session& session,
                                          const std::vector<std::string>& names);

// What `decode` needs from a .ptar: nullopt when `path` is not one (the caller then reads raw PT
// itself), else the session with all its streams (DecodeStreams merges several by time).
Result<std::optional<Session>> OpenIfArchive(const std::string& path, bool options_given);

}  // namespace ptprof
