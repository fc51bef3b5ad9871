#pragma once
// The SHA-256 compression function (FIPS 180-4, 6.2.2) over whole 64-byte blocks, two ways:
// portable C++, and with the x86 SHA extensions (Intel since Goldmont and Ice Lake, AMD since
// Zen), about five times faster, which Sha256 takes when the CPU has them. Archives are hashed
// whole when they are read, so this is on the path of every command that opens a .ptar.
#include <cstddef>
#include <cstdint>

namespace ptprof::archive::sha256 {

// The round constants (FIPS 180-4, 4.2.2), 16-byte aligned.
extern const uint32_t kRound[64];

// The eight state words after `blocks` blocks from `data`.
void PortableBlocks(uint32_t state[8], const uint8_t* data, size_t blocks);

// Whether ShaExtensionBlocks runs on this CPU (x86-64 with SHA, SSSE3 and SSE4.1).
bool HasShaExtensions();
// PortableBlocks with the SHA extensions; only where HasShaExtensions().
void ShaExtensionBlocks(uint32_t state[8], const uint8_t* data, size_t blocks);

}  // namespace ptprof::archive::sha256
