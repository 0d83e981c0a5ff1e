// The tab's own attention kernel (apps/web/kernels/attention.c, in int8-relaxed.wasm and
// int8-simd128.wasm) against attention computed here in float64: both builds, shapes with
// partial key blocks, short query tiles, head sizes and value widths that are not multiples of
// the kernel's vectors, several batch rows and heads, large scores (the streaming softmax's
// rescaling), an explicit scale, and the rows split between calls as threads split them. Runs
// in node (V8, the same WebAssembly as Chromium's), no browser.
import assert from "node:assert/strict";
import { test } from "node:test";

import { BUILT, loadKernel, numbers } from "./kernel_in_node.mjs";

function reference(q, k, v, { B, S, L, H, dh, dv, scale }) {
  const s = scale || 1 / Math.sqrt(dh);
  const out = new Float64Array(B * S * H * dv);
  const scores = new Float64Array(L);
  for (let b = 0; b < B; ++b) {
    for (let i = 0; i < S; ++i) {
      for (let h = 0; h < H; ++h) {
        let max = -Infinity;
        for (let j = 0; j < L; ++j) {
          let dot = 0;
          for (let d = 0; d < dh; ++d) dot += q[((b * S + i) * H + h) * dh + d] * k[((b * L + j) * H + h) * dh + d];
          scores[j] = dot * s;
          max = Math.max(max, scores[j]);
        }
        let sum = 0;
        for (let j = 0; j < L; ++j) sum += (scores[j] = Math.exp(scores[j] - max));
        for (let c = 0; c < dv; ++c) {
          let acc = 0;
          for (let j = 0; j < L; ++j) acc += scores[j] * v[((b * L + j) * H + h) * dv + c];
          out[((b * S + i) * H + h) * dv + c] = acc / sum;
        }
      }
    }
  }
  return out;
}

const CASES = [
  { name: "partial key block, short tiles, odd head size and value width", B: 2, S: 37, L: 131, H: 3, dh: 20, dv: 12, range: 1 },
  { name: "few keys (a decoder's prompt tokens)", B: 1, S: 9, L: 7, H: 1, dh: 64, dv: 64, range: 1 },
  { name: "value width with a vector and a scalar tail", B: 1, S: 6, L: 300, H: 2, dh: 32, dv: 13, range: 1 },
  { name: "large scores: the running maximum moves between key blocks", B: 1, S: 8, L: 260, H: 2, dh: 16, dv: 8, range: 6 },
  { name: "an explicit scale, one query", B: 1, S: 1, L: 70, H: 4, dh: 8, dv: 8, range: 2, scale: 0.37 },
];

for (const build of ["relaxed", "simd128"]) {
  test(`attention kernel (${build}) equals float64 attention`, { skip: !BUILT && "the tab's kernels are not built (clang-22)" }, async () => {
    const kernel = await loadKernel(build);
    try {
      for (const [n, c] of CASES.entries()) {
        const d = { B: c.B, S: c.S, L: c.L, H: c.H, dh: c.dh, dv: c.dv, scale: c.scale ?? 0 };
        const q = numbers(c.B * c.S * c.H * c.dh, 11 + n, -c.range, c.range);
        const k = numbers(c.B * c.L * c.H * c.dh, 23 + n, -c.range, c.range);
        const v = numbers(c.B * c.L * c.H * c.dv, 37 + n, -1, 1);
        const want = reference(q, k, v, d);
        const whole = await kernel.attention(q, k, v, d);
        // The rows split in two calls as two threads split them (a split inside a batch row).
        const rows = c.B * c.S, cut = Math.max(1, Math.floor(rows / 2) - 1);
        const parts = [[0, cut], [cut, rows]];
        await kernel.attention(q, k, v, d, true);  // (sets up the scratch; the calls below rewrite its output)
        const at = kernel.lastAttention;
        for (const [r0, r1] of parts) kernel.e.sam3_attention(at.q, at.k, at.v, at.out, c.B, c.S, c.L, c.H, c.dh, c.dv, d.scale, r0, r1, at.scratch[0]);
        const split = new Float32Array(kernel.memory.buffer, at.out, want.length).slice();
        for (const [label, got] of [["whole", whole], ["split rows", split]]) {
          let worst = 0;
          for (let i = 0; i < want.length; ++i) worst = Math.max(worst, Math.abs(got[i] - want[i]));
          assert.ok(worst <= 2e-6, `${c.name} (${label}): largest difference ${worst}`);
        }
      }
    } finally {
      kernel.release();
    }
  });
}
