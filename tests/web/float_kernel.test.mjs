// The tab's own float product (apps/web/kernels/float_gemm.c, in int8-relaxed.wasm and
// int8-simd128.wasm) against the product computed here in float64: both builds, shapes that
// reach every path of the kernel (a short last row tile, a partial last column panel, more
// depths than one depth block (512) and more columns than one column block (128), with and
// without a bias), and the rows split between calls as threads split them. Runs in node (V8,
// the same WebAssembly as Chromium's), no browser. The bound: 2e-6 of sum |a w| over a dot
// product (float32 sums of up to 1100 terms round by far less; a dropped depth block or a
// misplaced column is off by whole terms).
import assert from "node:assert/strict";
import { test } from "node:test";

import { BUILT, loadKernel, numbers } from "./kernel_in_node.mjs";

const CASES = [
  { name: "a short row tile, a partial column panel, a bias", m: 13, k: 37, n: 21, bias: true },
  { name: "two depth blocks (512 + 88), one column", m: 7, k: 600, n: 1, bias: false },
  { name: "three column blocks (128 + 128 + 44), a bias", m: 9, k: 64, n: 300, bias: true },
  { name: "depth and column blocks together, a bias", m: 50, k: 1100, n: 140, bias: true },
  { name: "one row", m: 1, k: 256, n: 256, bias: false },
];

for (const build of ["relaxed", "simd128"]) {
  test(`float product kernel (${build}) equals the float64 product`, { skip: !BUILT && "the tab's kernels are not built (clang-22)" }, async () => {
    const kernel = await loadKernel(build);
    try {
      for (const [i, c] of CASES.entries()) {
        const a = numbers(c.m * c.k, 11 + i, -2, 2), w = numbers(c.k * c.n, 23 + i, -1, 1);
        const bias = c.bias ? numbers(c.n, 37 + i, -3, 3) : null;
        const F = kernel.addMatMul({ weight: w, k: c.k, n: c.n, bias });
        const whole = await kernel.matmul(F, a, c.m);
        // The rows split in two calls as two threads split them.
        await kernel.matmul(F, a, c.m, true);
        const pa = kernel.floatScratch.at, py = pa + Math.ceil((c.m * c.k * 4) / 64) * 64;
        new Float32Array(kernel.memory.buffer, py, c.m * c.n).fill(NaN);
        const cut = Math.floor(c.m / 2);
        for (const [m0, m1] of [[0, cut], [cut, c.m]]) kernel.e.sam3_float_gemm(pa, m0, m1, c.k, F.packed, c.n, F.bias, py);
        const split = new Float32Array(kernel.memory.buffer, py, c.m * c.n).slice();
        for (const [label, got] of [["whole", whole], ["split rows", split]]) {
          let worst = 0;
          for (let r = 0; r < c.m; ++r) {
            for (let j = 0; j < c.n; ++j) {
              let want = bias ? bias[j] : 0, size = bias ? Math.abs(bias[j]) : 0;
              for (let q = 0; q < c.k; ++q) want += a[r * c.k + q] * w[q * c.n + j], size += Math.abs(a[r * c.k + q] * w[q * c.n + j]);
              // Math.max keeps a NaN: a row or column left unwritten fails.
              worst = Math.max(worst, Math.abs(got[r * c.n + j] - want) / size);
            }
          }
          assert.ok(worst <= 2e-6, `${c.name} (${label}): largest difference ${worst} of sum |a w|`);
        }
      }
    } finally {
      kernel.release();
    }
  });
}

// An Add of a constant taken into the product (x_add, optimize/onnx_split_matmuls.h): c added to
// every row group of a before the product, one float32 addition a value as ONNX Runtime's Add
// computes it (a sum rounded once to float32: Math.fround(a + c), bit for bit), for a constant
// shorter than a row, one row long, and several rows long (c repeated over the leading rows),
// counts not multiples of the kernel's 4 lanes; the product then reads the sum.
for (const build of ["relaxed", "simd128"]) {
  test(`float product kernel (${build}) adds a constant before the product as ONNX Runtime's Add does`, { skip: !BUILT && "the tab's kernels are not built (clang-22)" }, async () => {
    const kernel = await loadKernel(build);
    try {
      for (const [i, { m, k, count }] of [{ m: 6, k: 12, count: 3 }, { m: 5, k: 37, count: 37 }, { m: 9, k: 10, count: 30 }].entries()) {
        const a = numbers(m * k, 51 + i, -2, 2), c = numbers(count, 61 + i, -1e3, 1e3);
        const want = a.map((x, j) => Math.fround(x + c[j % count]));
        const at = kernel.alloc(m * k * 4), pc = kernel.alloc(count * 4);
        new Float32Array(kernel.memory.buffer, at, m * k).set(a);
        new Float32Array(kernel.memory.buffer, pc, count).set(c);
        kernel.e.sam3_float_add_periodic(at, m * k, pc, count);
        assert.deepEqual(new Float32Array(kernel.memory.buffer, at, m * k).slice(), want, `m ${m}, k ${k}, constant of ${count}`);
        // Through matmul: the product of the sum, against the product of want (same kernel, same order).
        const w = numbers(k * 4, 71 + i, -1, 1);
        const plain = kernel.addMatMul({ weight: w, k, n: 4 }), added = kernel.addMatMul({ weight: w, k, n: 4, pre: c });
        assert.deepEqual(await kernel.matmul(added, a, m), await kernel.matmul(plain, want, m), `the product reads the sum (constant of ${count})`);
      }
    } finally {
      kernel.release();
    }
  });
}
