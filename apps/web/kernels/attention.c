// The tab's own attention (docs/browser.md, "The tab's own attention kernel"): what ONNX Runtime's
// com.microsoft.MultiHeadAttention computes for query, key and value alone (no bias, no mask),
//   out[b, s, h] = softmax_j(scale * q[b, s, h] . k[b, j, h]) v[b, j, h]
// with q [B, S, H x dh], k [B, L, H x dh], v [B, L, H x dv], out [B, S, H x dv], computed with a
// streaming (online) softmax over blocks of keys, so no score matrix is held: 4 query rows at a
// time, each key block's scores, their maximum, the running sum and output rescaled, then the
// block's values added. Not bit-exact with ONNX Runtime (another summation order and exp):
// within float rounding.
//
// Built into the same module as the int8 product (int8_gemm.c), in its two builds: SAM3_RELAXED
// uses relaxed SIMD's f32x4.relaxed_madd (a fused multiply-add where V8 has FMA), the other
// SIMD128's multiply then add. One instance per worker over the shared memory; a call computes
// the query rows r0..r1 of B x S.
#include <stdint.h>
#include <wasm_simd128.h>

#ifndef ROWS
#define ROWS 4  // query rows per tile
#endif
#ifndef BLOCK
#define BLOCK 64  // keys per block (a multiple of 8)
#endif
#define FLOOR -3.0e38f  // "minus infinity" that keeps differences finite

#ifdef SAM3_RELAXED
static inline v128_t madd(v128_t a, v128_t b, v128_t c) { return wasm_f32x4_relaxed_madd(a, b, c); }
#else
static inline v128_t madd(v128_t a, v128_t b, v128_t c) { return wasm_f32x4_add(wasm_f32x4_mul(a, b), c); }
#endif

// e^x, 4 lanes: x = n ln2 + r, |r| <= ln2 / 2, e^r by Cephes' expf polynomial (about 1 ulp), 2^n
// put in the exponent bits. x is clamped to [-87.3, 88.3]: e^FLOOR gives 2^-126, not 0, which is
// below anything a sum of e^0 = 1 and more can notice.
static inline v128_t exp4(v128_t x) {
  x = wasm_f32x4_min(wasm_f32x4_max(x, wasm_f32x4_splat(-87.3f)), wasm_f32x4_splat(88.3f));
  const v128_t n = wasm_f32x4_nearest(wasm_f32x4_mul(x, wasm_f32x4_splat(1.44269504088896341f)));
  v128_t r = wasm_f32x4_sub(x, wasm_f32x4_mul(n, wasm_f32x4_splat(0.693359375f)));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, wasm_f32x4_splat(-2.12194440e-4f)));
  v128_t p = wasm_f32x4_splat(1.9875691500e-4f);
  p = madd(p, r, wasm_f32x4_splat(1.3981999507e-3f));
  p = madd(p, r, wasm_f32x4_splat(8.3334519073e-3f));
  p = madd(p, r, wasm_f32x4_splat(4.1665795894e-2f));
  p = madd(p, r, wasm_f32x4_splat(1.6666665459e-1f));
  p = madd(p, r, wasm_f32x4_splat(5.0000001201e-1f));
  p = madd(p, wasm_f32x4_mul(r, r), wasm_f32x4_add(r, wasm_f32x4_splat(1.0f)));
  const v128_t bits = wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_trunc_sat_f32x4(n), wasm_i32x4_splat(127)), 23);
  return wasm_f32x4_mul(p, bits);
}

static inline float max4(v128_t v) {
  v = wasm_f32x4_max(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_max(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}

static inline float sum4(v128_t v) {
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}

// The bytes of scratch a thread needs: K of one batch row transposed per head, [H][dh][L
// rounded up to BLOCK], and a tile's output rows.
__attribute__((export_name("sam3_attention_scratch"))) int32_t sam3_attention_scratch(int32_t L, int32_t H, int32_t dh, int32_t dv) {
  const int32_t lp = (L + BLOCK - 1) / BLOCK * BLOCK;
  return (H * dh * lp + ROWS * (dv + 4)) * 4 + 64;
}

// K of batch row b -> kt[h][d][j] (j padded to lp with zeros; their scores are set to FLOOR).
static void transpose_keys(const float* k, int32_t L, int32_t H, int32_t dh, int32_t lp, float* kt) {
  for (int32_t h = 0; h < H; ++h) {
    float* dst = kt + (int64_t)h * dh * lp;
    for (int32_t j = 0; j < L; ++j) {
      const float* src = k + (int64_t)j * H * dh + (int64_t)h * dh;
      for (int32_t d = 0; d < dh; ++d) dst[(int64_t)d * lp + j] = src[d];
    }
    for (int32_t d = 0; d < dh; ++d) {
      for (int32_t j = L; j < lp; ++j) dst[(int64_t)d * lp + j] = 0.0f;
    }
  }
}

// One tile: `rows` (1..ROWS) query rows q (stride qs, already scaled) of one head against all L
// keys (kt: that head's [dh][lp]; v: its first value, stride vs) -> out rows (stride os).
static void tile(const float* q, int64_t qs, int rows, const float* kt, int32_t L, int32_t lp, int32_t dh, const float* v, int64_t vs,
                 int32_t dv, float* out, int64_t os, float* o /* ROWS x dv scratch */) {
  float m[ROWS], l[ROWS];
  float s[ROWS][BLOCK] __attribute__((aligned(16)));
  const float* qr[ROWS];
  for (int r = 0; r < ROWS; ++r) {
    qr[r] = q + (r < rows ? r : rows - 1) * qs;  // a short tile repeats its last row (not written)
    m[r] = FLOOR, l[r] = 0.0f;
  }
  const int32_t dv4 = dv & ~3;
  for (int i = 0; i < ROWS * dv; ++i) o[i] = 0.0f;
  for (int32_t j0 = 0; j0 < L; j0 += BLOCK) {
    // Scores of the block's keys, 8 at a time (a short block, as over a few prompt tokens,
    // computes only its keys rounded up to 8).
    const int32_t n = L - j0 < BLOCK ? L - j0 : BLOCK, n8 = (n + 7) & ~7;
    for (int32_t j = 0; j < n8; j += 8) {
      v128_t a[ROWS][2];
      for (int r = 0; r < ROWS; ++r) a[r][0] = a[r][1] = wasm_f32x4_splat(0.0f);
      const float* kc = kt + j0 + j;
      for (int32_t d = 0; d < dh; ++d, kc += lp) {
        const v128_t k0 = wasm_v128_load(kc), k1 = wasm_v128_load(kc + 4);
        for (int r = 0; r < ROWS; ++r) {
          const v128_t x = wasm_v128_load32_splat(qr[r] + d);
          a[r][0] = madd(x, k0, a[r][0]);
          a[r][1] = madd(x, k1, a[r][1]);
        }
      }
      for (int r = 0; r < ROWS; ++r) wasm_v128_store(&s[r][j], a[r][0]), wasm_v128_store(&s[r][j + 4], a[r][1]);
    }
    for (int r = 0; r < ROWS; ++r) {
      for (int32_t j = n; j < n8; ++j) s[r][j] = FLOOR;
    }
    // The running maximum, the block's exponentials and the rescaled sum and output.
    for (int r = 0; r < ROWS; ++r) {
      v128_t mx = wasm_f32x4_splat(m[r]);
      for (int32_t j = 0; j < n8; j += 4) mx = wasm_f32x4_max(mx, wasm_v128_load(&s[r][j]));
      const float mnew = max4(mx);
      const v128_t mv = wasm_f32x4_splat(mnew);
      v128_t sum = wasm_f32x4_splat(0.0f);
      for (int32_t j = 0; j < n8; j += 4) {
        const v128_t p = exp4(wasm_f32x4_sub(wasm_v128_load(&s[r][j]), mv));
        wasm_v128_store(&s[r][j], p);
        sum = wasm_f32x4_add(sum, p);
      }
      const float alpha = wasm_f32x4_extract_lane(exp4(wasm_f32x4_splat(m[r] - mnew)), 0);
      l[r] = l[r] * alpha + sum4(sum);
      m[r] = mnew;
      if (alpha != 1.0f) {
        const v128_t av = wasm_f32x4_splat(alpha);
        float* orow = o + r * dv;
        int32_t c = 0;
        for (; c < dv4; c += 4) wasm_v128_store(orow + c, wasm_f32x4_mul(wasm_v128_load(orow + c), av));
        for (; c < dv; ++c) orow[c] *= alpha;
      }
    }
    // o += p V over the block's keys, 8 output columns at a time.
    const float* vb = v + (int64_t)j0 * vs;
    int32_t c = 0;
    for (; c + 8 <= dv4; c += 8) {
      v128_t a[ROWS][2];
      for (int r = 0; r < ROWS; ++r) a[r][0] = wasm_v128_load(o + r * dv + c), a[r][1] = wasm_v128_load(o + r * dv + c + 4);
      const float* vc = vb + c;
      for (int32_t j = 0; j < n; ++j, vc += vs) {
        const v128_t v0 = wasm_v128_load(vc), v1 = wasm_v128_load(vc + 4);
        for (int r = 0; r < ROWS; ++r) {
          const v128_t p = wasm_v128_load32_splat(&s[r][j]);
          a[r][0] = madd(p, v0, a[r][0]);
          a[r][1] = madd(p, v1, a[r][1]);
        }
      }
      for (int r = 0; r < ROWS; ++r) wasm_v128_store(o + r * dv + c, a[r][0]), wasm_v128_store(o + r * dv + c + 4, a[r][1]);
    }
    for (; c < dv4; c += 4) {
      v128_t a[ROWS];
      for (int r = 0; r < ROWS; ++r) a[r] = wasm_v128_load(o + r * dv + c);
      const float* vc = vb + c;
      for (int32_t j = 0; j < n; ++j, vc += vs) {
        const v128_t v0 = wasm_v128_load(vc);
        for (int r = 0; r < ROWS; ++r) a[r] = madd(wasm_v128_load32_splat(&s[r][j]), v0, a[r]);
      }
      for (int r = 0; r < ROWS; ++r) wasm_v128_store(o + r * dv + c, a[r]);
    }
    for (; c < dv; ++c) {
      for (int r = 0; r < ROWS; ++r) {
        float acc = o[r * dv + c];
        for (int32_t j = 0; j < n; ++j) acc += s[r][j] * vb[(int64_t)j * vs + c];
        o[r * dv + c] = acc;
      }
    }
  }
  for (int r = 0; r < rows; ++r) {
    const float inv = 1.0f / l[r];
    for (int32_t c = 0; c < dv; ++c) out[r * os + c] = o[r * dv + c] * inv;
  }
}

// Query rows r0..r1 of the B x S rows (all heads). scale: 0 for 1 / sqrt(dh). scratch:
// sam3_attention_scratch's bytes, this thread's own.
__attribute__((export_name("sam3_attention"))) void sam3_attention(const float* q, const float* k, const float* v, float* out, int32_t B,
                                                                   int32_t S, int32_t L, int32_t H, int32_t dh, int32_t dv, float scale,
                                                                   int32_t r0, int32_t r1, float* scratch) {
  if (scale == 0.0f) scale = 1.0f / __builtin_sqrtf((float)dh);
  const int32_t lp = (L + BLOCK - 1) / BLOCK * BLOCK;
  float* kt = (float*)(((uintptr_t)scratch + 15) & ~(uintptr_t)15);
  float* o = kt + (int64_t)H * dh * lp;
  float qs[ROWS * 512];  // a tile's query rows, scaled (dh <= 512: checked by the caller)
  for (int32_t b = r0 / S; b < B && (int64_t)b * S < r1; ++b) {
    const int32_t s0 = r0 > b * S ? r0 - b * S : 0, s1 = r1 < (b + 1) * S ? r1 - b * S : S;
    transpose_keys(k + (int64_t)b * L * H * dh, L, H, dh, lp, kt);
    for (int32_t h = 0; h < H; ++h) {
      for (int32_t s = s0; s < s1; s += ROWS) {
        const int rows = s1 - s < ROWS ? s1 - s : ROWS;
        for (int r = 0; r < rows; ++r) {
          const float* src = q + ((int64_t)b * S + s + r) * H * dh + (int64_t)h * dh;
          for (int32_t d = 0; d < dh; ++d) qs[r * dh + d] = src[d] * scale;
        }
        tile(qs, dh, rows, kt + (int64_t)h * dh * lp, L, lp, dh, v + (int64_t)b * L * H * dv + (int64_t)h * dv, (int64_t)H * dv, dv,
             out + ((int64_t)b * S + s) * H * dv + (int64_t)h * dv, (int64_t)H * dv, o);
      }
    }
  }
}
