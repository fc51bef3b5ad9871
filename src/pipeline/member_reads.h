#pragma once
// ReadMembers answers "every member of an archive, read to where it goes (a file, a mapping,
// memory), on up to `jobs` threads at once". A .ptar of a large program holds tens of MB of code
// and trace, and decompressing its members one after another was the longest serial part of
// opening it: a compiler's archive (a 33 MB binary, a 12 MB trace) took about 100 ms in its
// members before any decode could start. The members are read largest first, each by one thread;
// the caller sees what reading them one after another in the archive's order would give: the
// first failure in that order is the error, whatever the others did.
#include <cstdint>
#include <string>
#include <vector>

#include "sideband/shared_bytes.h"
#include "src/archive/archive_reader.h"
#include "src/model/result.h"

namespace ptprof {

struct MemberRead {
  enum class To {
    kFile,        // written to `file` (an image, mapped later by ImageSet)
    kMappedFile,  // written to `file`, mapped into `shared` and the name removed (a large stream)
    kShared,      // decompressed into `shared` (huge pages where the kernel gives them)
    kMemory,      // decompressed into `bytes`
  };
  const archive::MemberInfo* member = nullptr;
  To to = To::kMemory;
  std::string file;  // kFile, kMappedFile
  // What ReadMembers made.
  SharedBytes shared;
  std::vector<uint8_t> bytes;
};

// Reads every entry of `reads` with `reader`, on the calling thread and up to `jobs` - 1 more.
// The first entry, in `reads`' order, whose read failed is the error; one that threw (out of
// memory) throws it again here.
Status ReadMembers(const archive::ArchiveReader& reader, std::vector<MemberRead>& reads,
                   unsigned jobs);

}  // namespace ptprof
