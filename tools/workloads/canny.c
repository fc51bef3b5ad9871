// Sweep workload Canny: a Canny-style edge detector on a generated image (discs and bars on a
// noisy gradient, from a seeded generator): 5x5 Gaussian blur, Sobel gradients, non-maximum
// suppression along the gradient direction and hysteresis thresholding with an explicit stack.
// Built twice, at -O0 (CannyNoOptimize) and -O2 (CannyOptimize), to show what the compiler's
// branch and loop optimisations do to the trace.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define W 96
#define H 96

static uint64_t rng_state = 0xbe5466cf34e90c6cull;
static uint32_t NextRandom(void) {  // xorshift64*, deterministic
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

static float image[H][W], blurred[H][W], magnitude[H][W], thin[H][W];
static float gx[H][W], gy[H][W];
static uint8_t edges[H][W];

static void GenerateImage(void) {
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      float v = (float)(x + y) * 0.5f;
      int dx = x - W / 3, dy = y - H / 3;
      if (dx * dx + dy * dy < (W / 6) * (W / 6)) v += 120.0f;  // a disc
      if (x > 2 * W / 3 && x < 2 * W / 3 + 8) v += 90.0f;    // a bar
      if (y > 3 * H / 4 && (x / 8) % 2 == 0) v -= 60.0f;     // stripes
      image[y][x] = v + (float)(NextRandom() % 16);
    }
}

static int Clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static void GaussianBlur(void) {
  static const float kernel[5][5] = {{2, 4, 5, 4, 2},
                                     {4, 9, 12, 9, 4},
                                     {5, 12, 15, 12, 5},
                                     {4, 9, 12, 9, 4},
                                     {2, 4, 5, 4, 2}};
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      float sum = 0;
      for (int ky = -2; ky <= 2; ++ky)
        for (int kx = -2; kx <= 2; ++kx)
          sum += kernel[ky + 2][kx + 2] * image[Clamp(y + ky, 0, H - 1)][Clamp(x + kx, 0, W - 1)];
      blurred[y][x] = sum / 159.0f;
    }
}

static void Sobel(void) {
  for (int y = 1; y < H - 1; ++y)
    for (int x = 1; x < W - 1; ++x) {
      float sx = -blurred[y - 1][x - 1] - 2 * blurred[y][x - 1] - blurred[y + 1][x - 1] +
                 blurred[y - 1][x + 1] + 2 * blurred[y][x + 1] + blurred[y + 1][x + 1];
      float sy = -blurred[y - 1][x - 1] - 2 * blurred[y - 1][x] - blurred[y - 1][x + 1] +
                 blurred[y + 1][x - 1] + 2 * blurred[y + 1][x] + blurred[y + 1][x + 1];
      gx[y][x] = sx;
      gy[y][x] = sy;
      magnitude[y][x] = (sx < 0 ? -sx : sx) + (sy < 0 ? -sy : sy);
    }
}

// Keeps a pixel only where its magnitude is a maximum along the gradient direction, quantised to
// 0, 45, 90 or 135 degrees (tan 22.5 ~ 0.4142, tan 67.5 ~ 2.4142).
static void NonMaximumSuppression(void) {
  for (int y = 1; y < H - 1; ++y)
    for (int x = 1; x < W - 1; ++x) {
      float m = magnitude[y][x], a, b;
      float ax = gx[y][x] < 0 ? -gx[y][x] : gx[y][x];
      float ay = gy[y][x] < 0 ? -gy[y][x] : gy[y][x];
      if (ay <= 0.4142f * ax) {
        a = magnitude[y][x - 1];
        b = magnitude[y][x + 1];
      } else if (ay >= 2.4142f * ax) {
        a = magnitude[y - 1][x];
        b = magnitude[y + 1][x];
      } else if ((gx[y][x] > 0) == (gy[y][x] > 0)) {
        a = magnitude[y - 1][x - 1];
        b = magnitude[y + 1][x + 1];
      } else {
        a = magnitude[y - 1][x + 1];
        b = magnitude[y + 1][x - 1];
      }
      thin[y][x] = (m >= a && m >= b) ? m : 0;
    }
}

// Strong pixels are edges; weak pixels are edges when connected to a strong one.
static int Hysteresis(float low, float high) {
  static int stack[W * H];
  int top = 0, count = 0;
  for (int y = 1; y < H - 1; ++y)
    for (int x = 1; x < W - 1; ++x)
      if (thin[y][x] >= high && !edges[y][x]) {
        edges[y][x] = 1;
        stack[top++] = y * W + x;
        while (top > 0) {
          int p = stack[--top], py = p / W, px = p % W;
          ++count;
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              int ny = py + dy, nx = px + dx;
              if (ny < 1 || ny >= H - 1 || nx < 1 || nx >= W - 1) continue;
              if (!edges[ny][nx] && thin[ny][nx] >= low) {
                edges[ny][nx] = 1;
                stack[top++] = ny * W + nx;
              }
            }
        }
      }
  return count;
}

int main(void) {
  GenerateImage();
  GaussianBlur();
  Sobel();
  NonMaximumSuppression();
  int count = Hysteresis(40.0f, 100.0f);
  uint32_t checksum = 0;
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) checksum = checksum * 31 + edges[y][x];
  printf("canny %d %08x\n", count, checksum);
  return 0;
}
