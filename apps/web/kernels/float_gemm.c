// The tab's own float product (docs/browser.md, "The tab's own float product"): what ONNX
// Runtime's MatMul computes for an activation a [m, k] and a constant weight w [k, n], optionally
// followed by the Add of a constant bias [n]: y = a w (+ bias). Not bit-exact with ONNX Runtime
// (another summation order; fused multiply-adds in the relaxed build): within float rounding.
//
// Built into the same module as the int8 product and attention (int8_gemm.c, attention.c), in
// its two builds: SAM3_RELAXED uses relaxed SIMD's f32x4.relaxed_madd (one fused multiply-add
// where V8 has FMA), the other SIMD128's multiply then add. One instance per worker over the
// shared memory; a call computes the rows m0..m1.
//
// The weight is packed once: columns in panels of NR (zero padded), each panel [k][NR], so that a
// tile of MR rows x NR columns reads one contiguous stream of weights and broadcasts one
// activation value per row and depth: MR x NR / 4 accumulators (6 x 8: 12 of V8's 16 vector
// registers on x64). Blocked for the caches: KC depths (the tile's activation rows stay in L1)
// times NC columns (their packed weights stay in L2) at a time.
#include <stdint.h>
#include <wasm_simd128.h>

#ifndef NV
#define NV 2  // vectors of 4 columns per panel
#endif
#define NR (4 * NV)  // columns per panel
#ifndef MR
#define MR 4  // rows per tile
#endif
#ifndef KC
#define KC 512  // depths per block
#endif
#ifndef NC
#define NC 128  // columns per block (KC x NC floats: 256 KB)
#endif

#ifdef SAM3_RELAXED
static inline v128_t madd(v128_t a, v128_t b, v128_t c) { return wasm_f32x4_relaxed_madd(a, b, c); }
#else
static inline v128_t madd(v128_t a, v128_t b, v128_t c) { return wasm_f32x4_add(wasm_f32x4_mul(a, b), c); }
#endif

static inline int32_t panels(int32_t n) { return (n + NR - 1) / NR; }

// The packed weight's floats: sam3_float_pack's output size.
__attribute__((export_name("sam3_float_packed_size"))) int32_t sam3_float_packed_size(int32_t k, int32_t n) { return panels(n) * NR * k; }

// w [k, n] (row-major) -> packed [n / NR][k][NR], the last panel's missing columns zero.
__attribute__((export_name("sam3_float_pack"))) void sam3_float_pack(const float* w, int32_t k, int32_t n, float* packed) {
  for (int32_t p = 0; p < panels(n); ++p) {
    float* dst = packed + (int64_t)p * k * NR;
    for (int32_t kk = 0; kk < k; ++kk) {
      for (int32_t j = 0; j < NR; ++j) {
        const int32_t c = p * NR + j;
        dst[(int64_t)kk * NR + j] = c < n ? w[(int64_t)kk * n + c] : 0.0f;
      }
    }
  }
}

// One tile: `rows` (1..MR, a constant where inlined) rows of a (stride lda, depths kk..kk+kn) by
// one panel's depths (w: that panel at depth kk) -> acc, started from zero or from y (`add`).
static inline __attribute__((always_inline)) void tile(int rows, const float* a, int64_t lda, int32_t kn, const float* w,
                                                       v128_t acc[MR][NV]) {
  for (int32_t kk = 0; kk < kn; ++kk, w += NR) {
    v128_t wv[NV];
    for (int v = 0; v < NV; ++v) wv[v] = wasm_v128_load(w + 4 * v);
    for (int r = 0; r < rows; ++r) {
      const v128_t x = wasm_v128_load32_splat(a + r * lda + kk);
      for (int v = 0; v < NV; ++v) acc[r][v] = madd(x, wv[v], acc[r][v]);
    }
  }
}

// Rows m..m+rows of y, columns of panel p: started from zero (first depth block) or y, the
// block's products added, and on the last depth block the bias.
static inline __attribute__((always_inline)) void block(int rows, const float* a, int32_t k, int32_t k0, int32_t kn, const float* wp,
                                                        int32_t p, int32_t n, const float* bias, float* y, int first, int last) {
  v128_t acc[MR][NV];
  const int full = (p + 1) * NR <= n;
  for (int r = 0; r < rows; ++r) {
    float t[NR] __attribute__((aligned(16))) = {0};
    const float* from = y + (int64_t)r * n + p * NR;
    if (!first && !full) {
      for (int j = 0; p * NR + j < n; ++j) t[j] = from[j];
      from = t;
    }
    for (int v = 0; v < NV; ++v) acc[r][v] = first ? wasm_f32x4_splat(0.0f) : wasm_v128_load(from + 4 * v);
  }
  tile(rows, a + k0, k, kn, wp + (int64_t)k0 * NR, acc);
  for (int r = 0; r < rows; ++r) {
    if (last && bias) {
      float t[NR] __attribute__((aligned(16))) = {0};
      for (int j = 0; j < NR && p * NR + j < n; ++j) t[j] = bias[p * NR + j];
      for (int v = 0; v < NV; ++v) acc[r][v] = wasm_f32x4_add(acc[r][v], wasm_v128_load(t + 4 * v));
    }
    float* out = y + (int64_t)r * n + p * NR;
    if (full) {
      for (int v = 0; v < NV; ++v) wasm_v128_store(out + 4 * v, acc[r][v]);
    } else {
      float t[NR] __attribute__((aligned(16)));
      for (int v = 0; v < NV; ++v) wasm_v128_store(t + 4 * v, acc[r][v]);
      for (int j = 0; p * NR + j < n; ++j) out[j] = t[j];
    }
  }
}

// y[m0..m1, n] = a[m0..m1, k] w (+ bias[n] when bias is given); w packed by sam3_float_pack.
__attribute__((export_name("sam3_float_gemm"))) void sam3_float_gemm(const float* a, int32_t m0, int32_t m1, int32_t k, const float* packed,
                                                                     int32_t n, const float* bias, float* y) {
  for (int32_t k0 = 0; k0 < k; k0 += KC) {
    const int32_t kn = k - k0 < KC ? k - k0 : KC;
    const int first = k0 == 0, last = k0 + kn >= k;
    for (int32_t p0 = 0; p0 < panels(n); p0 += NC / NR) {
      const int32_t p1 = p0 + NC / NR < panels(n) ? p0 + NC / NR : panels(n);
      int32_t m = m0;
      for (; m + MR <= m1; m += MR) {
        const float* ar = a + (int64_t)m * k;
        for (int32_t p = p0; p < p1; ++p)
          block(MR, ar, k, k0, kn, packed + (int64_t)p * k * NR, p, n, bias, y + (int64_t)m * n, first, last);
      }
      for (; m < m1; ++m) {
        const float* ar = a + (int64_t)m * k;
        for (int32_t p = p0; p < p1; ++p)
          block(1, ar, k, k0, kn, packed + (int64_t)p * k * NR, p, n, bias, y + (int64_t)m * n, first, last);
      }
    }
  }
}

// x[i] += c[i % count] for i < n, n a multiple of count: an Add of a constant before the product,
// broadcast as ONNX broadcasts c over x's leading dimensions (optimize/onnx_split_matmuls.h's
// x_add). One IEEE addition per value, as ONNX Runtime's Add: the same sums bit for bit.
__attribute__((export_name("sam3_float_add_periodic"))) void sam3_float_add_periodic(float* x, int32_t n, const float* c, int32_t count) {
  for (int32_t i = 0; i + count <= n; i += count) {
    float* r = x + i;
    int32_t j = 0;
    for (; j + 4 <= count; j += 4) wasm_v128_store(r + j, wasm_f32x4_add(wasm_v128_load(r + j), wasm_v128_load(c + j)));
    for (; j < count; ++j) r[j] += c[j];
  }
}
