// The tab's own int8 product (docs/browser.md, "Relaxed-SIMD int8 products"): what ONNX Runtime's
// DynamicQuantizeMatMul computes after its quantization, y = float(sum (a - za)(w - zw)) * (sa * sw)
// [+ bias], bit for bit: the integer sums are exact and the float steps are ONNX Runtime's, in its
// order (a product, then the bias added), with no fused multiply-add (-ffp-contract=off).
//
// A freestanding wasm32 module over an imported shared memory, so that one instance per worker
// computes its rows. Two builds from this file: SAM3_RELAXED uses relaxed SIMD's
// i32x4.relaxed_dot_i8x16_i7x16_add_s (one VNNI instruction where V8 lowers it so), the other
// the same sums with SIMD128's 16-bit dot product. The relaxed instruction is exact only where
// the CPU reads its second operand as unsigned bytes and sums without saturating:
// sam3_int8_exact() checks that on the values that tell the lowerings apart.
//
// Weights are packed once: columns in blocks of 8, K in steps of 4 (zero padded), each byte
// w - 128 for uint8 weights (signed bytes as they are), so that the activation (0..255) is the
// unsigned operand. With o = 128 or 0 and zw the weight's zero point:
//   sum (a - za)(w - zw) = sum a (w - o) + (o - zw) sum a - za sum (w - zw)
#include <stdint.h>
#include <wasm_simd128.h>

#define NR 8  // columns per block
#ifndef MR
#define MR 4  // rows per tile
#endif

#ifdef SAM3_RELAXED
static inline v128_t dot4(v128_t w, v128_t a, v128_t acc) { return wasm_i32x4_relaxed_dot_i8x16_i7x16_add(w, a, acc); }

// 1 where the relaxed dot product is the exact unsigned-by-signed one: 255 read as 255 (not -1)
// and 4 x 255 x -128 summed without 16-bit saturation (x86's pmaddubsw fallback saturates, ARM's
// sdot reads 255 as -1).
__attribute__((export_name("sam3_int8_exact"))) int32_t sam3_int8_exact(volatile int32_t* scratch) {
  scratch[0] = (int32_t)0x80808080u, scratch[1] = 0x7f7f7f7f, scratch[2] = 0x01ff80ff, scratch[3] = (int32_t)0xff7f0180u;
  scratch[4] = (int32_t)0xffffffffu, scratch[5] = (int32_t)0xffffffffu, scratch[6] = (int32_t)0x80ff00ffu, scratch[7] = 0x7f01ff80;
  const v128_t w = wasm_v128_load((const void*)scratch), a = wasm_v128_load((const void*)(scratch + 4));
  int32_t got[4];
  wasm_v128_store(got, dot4(w, a, wasm_i32x4_splat(7)));
  const int8_t* ws = (const int8_t*)scratch;
  const uint8_t* as = (const uint8_t*)(scratch + 4);
  for (int lane = 0; lane < 4; ++lane) {
    int32_t want = 7;
    for (int j = 0; j < 4; ++j) want += ws[4 * lane + j] * as[4 * lane + j];
    if (got[lane] != want) return 0;
  }
  return 1;
}
#else
static inline v128_t dot4(v128_t w, v128_t a, v128_t acc) {
  const v128_t a16 = wasm_u16x8_extend_low_u8x16(a);
  const v128_t lo = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(w), a16);   // columns 0, 1: two pair sums each
  const v128_t hi = wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(w), a16);  // columns 2, 3
  return wasm_i32x4_add(acc, wasm_i32x4_add(wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6), wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7)));
}

__attribute__((export_name("sam3_int8_exact"))) int32_t sam3_int8_exact(volatile int32_t* scratch) {
  (void)scratch;
  return 1;
}
#endif

static inline int32_t blocks(int32_t n, int32_t b) { return (n + b - 1) / b; }

// w [k, n] (row-major, uint8 or int8) -> packed [n/8][k/4][8 x 4] bytes; per column (padded to 8):
// col_sum = sum_k (w - zw), zero_offset = o - zw. zero_points: one or n values (of w's type).
__attribute__((export_name("sam3_int8_pack"))) void sam3_int8_pack(const uint8_t* w, int32_t k, int32_t n, int32_t is_signed,
                                                                   const uint8_t* zero_points, int32_t zero_point_count, int8_t* packed,
                                                                   int32_t* col_sum, int32_t* zero_offset) {
  const int32_t k4 = blocks(k, 4), o = is_signed ? 0 : 128;
  for (int32_t c = 0; c < blocks(n, NR) * NR; ++c) {
    int8_t* dst = packed + (c / NR) * k4 * 4 * NR + (c % NR) * 4;
    int32_t zw = 0, sum = 0;
    if (c < n && zero_points) {
      const uint8_t z = zero_points[zero_point_count > 1 ? c : 0];
      zw = is_signed ? (int8_t)z : z;
    }
    for (int32_t kk = 0; kk < k4 * 4; ++kk) {
      int32_t v = 0;
      if (c < n && kk < k) {
        v = is_signed ? (int8_t)w[(int64_t)kk * n + c] : w[(int64_t)kk * n + c];
        sum += v - zw;
        v -= o;
      }
      dst[(kk / 4) * 4 * NR + kk % 4] = (int8_t)v;
    }
    col_sum[c] = sum;
    zero_offset[c] = c < n ? o - zw : 0;
  }
}

static inline int32_t row_sum(const uint8_t* a, int32_t k) {
  v128_t s = wasm_i32x4_splat(0);
  int32_t i = 0;
  for (; i + 16 <= k; i += 16)
    s = wasm_i32x4_add(s, wasm_u32x4_extadd_pairwise_u16x8(wasm_u16x8_extadd_pairwise_u8x16(wasm_v128_load(a + i))));
  int32_t total =
      wasm_i32x4_extract_lane(s, 0) + wasm_i32x4_extract_lane(s, 1) + wasm_i32x4_extract_lane(s, 2) + wasm_i32x4_extract_lane(s, 3);
  for (; i < k; ++i) total += a[i];
  return total;
}

// `rows` (1..MR) rows from a, 8 columns of one packed block; the activation rows are read 4
// bytes at a time, so a row may be read up to 3 bytes past k (the caller's buffer allows it).
static inline __attribute__((always_inline)) void tile(int rows, const uint8_t* a, int32_t lda, int32_t k4, const int8_t* w,
                                                       v128_t acc[][2]) {
  for (int r = 0; r < rows; ++r) acc[r][0] = acc[r][1] = wasm_i32x4_splat(0);
  for (int32_t kk = 0; kk < k4; kk += 4, w += 4 * NR) {
    const v128_t w0 = wasm_v128_load(w), w1 = wasm_v128_load(w + 16);
    for (int r = 0; r < rows; ++r) {
      const v128_t x = wasm_v128_load32_splat(a + (int64_t)r * lda + kk);
      acc[r][0] = dot4(w0, x, acc[r][0]);
      acc[r][1] = dot4(w1, x, acc[r][1]);
    }
  }
}

// y[m, n] for rows m0..m1 of a [m, k] (uint8, zero point za): ONNX Runtime's scale sa * sw (sw:
// one or n values) times the exact integer sum, then + bias[n] when bias is given.
__attribute__((export_name("sam3_int8_gemm"))) void sam3_int8_gemm(const uint8_t* a, int32_t m0, int32_t m1, int32_t k, int32_t za,
                                                                   const int8_t* packed, const int32_t* col_sum, const int32_t* zero_offset,
                                                                   int32_t n, float sa, const float* sw, int32_t sw_count,
                                                                   const float* bias, float* y) {
  const int32_t k4 = blocks(k, 4) * 4;
  v128_t acc[MR][2];
  int32_t sums[MR];
  for (int32_t m = m0; m < m1; m += MR) {
    const int rows = m1 - m < MR ? m1 - m : MR;
    const uint8_t* arow = a + (int64_t)m * k;
    for (int r = 0; r < rows; ++r) sums[r] = row_sum(arow + (int64_t)r * k, k);
    for (int32_t b = 0; b < blocks(n, NR); ++b) {
      const int8_t* w = packed + (int64_t)b * k4 * NR;
      if (rows == MR)
        tile(MR, arow, k, k4, w, acc);
      else
        for (int r = 0; r < rows; ++r) tile(1, arow + (int64_t)r * k, k, k4, w, acc + r);
      for (int r = 0; r < rows; ++r) {
        int32_t dots[NR];
        wasm_v128_store(dots, acc[r][0]);
        wasm_v128_store(dots + 4, acc[r][1]);
        float* out = y + (int64_t)(m + r) * n;
        for (int j = 0; j < NR && b * NR + j < n; ++j) {
          const int32_t c = b * NR + j;
          // (unsigned: wrapping arithmetic, exact wherever the true sum fits 32 bits, as ONNX Runtime's)
          const int32_t sum =
              (int32_t)((uint32_t)dots[j] + (uint32_t)zero_offset[c] * (uint32_t)sums[r] - (uint32_t)za * (uint32_t)col_sum[c]);
          const float scale = sa * sw[sw_count > 1 ? c : 0];
          float v = (float)sum * scale;
          if (bias) v = v + bias[c];
          out[c] = v;
        }
      }
    }
  }
}
