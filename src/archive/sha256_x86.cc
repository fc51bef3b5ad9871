// SHA-256 blocks with the x86 SHA extensions. sha256rnds2 makes two rounds from the state held
// as {A,B,E,F} and {C,D,G,H} and two message-plus-constant words; sha256msg1/msg2 make the next
// four message words from the sixteen before them.
#include "src/archive/sha256_blocks.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace ptprof::archive::sha256 {

#if defined(__x86_64__)

bool HasShaExtensions() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool ssse3 = ecx & (1u << 9), sse41 = ecx & (1u << 19);
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool sha = ebx & (1u << 29);
  return ssse3 && sse41 && sha;
}

__attribute__((target("sha,ssse3,sse4.1"))) void ShaExtensionBlocks(uint32_t state[8],
                                                                     const uint8_t* data,
                                                                     size_t blocks) {
  // Message words are big-endian: reversed within each 32-bit lane when loaded.
  const __m128i big_endian = _mm_set_epi64x(0x0c0d0e0f08090a0bll, 0x0405060700010203ll);
  // {A,B,C,D} and {E,F,G,H} (A in lane 0) into {A,B,E,F} and {C,D,G,H} (A, C in lane 3).
  const __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  const __m128i efgh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
  const __m128i badc = _mm_shuffle_epi32(abcd, 0xb1);  // lanes B,A,D,C
  const __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1b);  // lanes H,G,F,E
  __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);       // lanes F,E,B,A
  __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xf0);    // lanes H,G,D,C
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[4];  // the last sixteen message words, four per register, oldest first
    for (int i = 0; i < 4; ++i)
      w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * i)),
                              big_endian);
    for (int group = 0; group < 16; ++group) {
      __m128i words;
      if (group < 4) {
        words = w[group];
      } else {
        // W[t..t+3] = sigma1 terms + W[t-7..t-4] + sigma0 terms + W[t-16..t-13].
        const __m128i& w16 = w[group % 4];        // W[t-16..t-13]
        const __m128i& w12 = w[(group + 1) % 4];  // W[t-12..t-9]
        const __m128i& w8 = w[(group + 2) % 4];   // W[t-8..t-5]
        const __m128i& w4 = w[(group + 3) % 4];   // W[t-4..t-1]
        __m128i next = _mm_sha256msg1_epu32(w16, w12);
        next = _mm_add_epi32(next, _mm_alignr_epi8(w4, w8, 4));  // W[t-7..t-4]
        words = _mm_sha256msg2_epu32(next, w4);
        w[group % 4] = words;
      }
      __m128i wk = _mm_add_epi32(
          words, _mm_load_si128(reinterpret_cast<const __m128i*>(kRound + 4 * group)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);  // two rounds: the new {A,B,E,F}
      wk = _mm_shuffle_epi32(wk, 0x0e);              // the group's other two words
      abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);  // two more; the old {A,B,E,F} is {C,D,G,H}
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  // Back to {A,B,C,D} and {E,F,G,H}.
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1b);  // lanes A,B,E,F
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1);  // lanes G,H,C,D
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, dchg, 0xf0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}

#else

bool HasShaExtensions() { return false; }
void ShaExtensionBlocks(uint32_t state[8], const uint8_t* data, size_t blocks) {
  PortableBlocks(state, data, blocks);
}

#endif

}  // namespace ptprof::archive::sha256
