// What the kernels' node tests share (the tab's kernel module run in node's V8, no browser):
// where the built module is, a kernel of one build, and reproducible inputs.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import v8 from "node:v8";

v8.setFlagsFromString("--experimental-wasm-relaxed-simd");  // (node 20: V8 12 without it on by default)
const WEB = process.env.SAM3_WEB_DIR ?? path.join(process.env.SAM3_WEB_OUT ?? "build", "web");
export const BUILT = existsSync(path.join(WEB, "int8-relaxed.wasm")) && existsSync(path.join(WEB, "sam3-int8.mjs"));

// The kernel module of `build` ("relaxed" or "simd128") on one thread.
export async function loadKernel(build) {
  const { Kernels } = await import(pathToFileURL(path.join(path.resolve(WEB), "sam3-int8.mjs")).href);
  return Kernels.create(readFileSync(path.join(WEB, `int8-${build}.wasm`)), 1);
}

// A reproducible stream of numbers in [lo, hi).
export function numbers(count, seed, lo, hi) {
  const out = new Float32Array(count);
  let x = seed >>> 0;
  for (let i = 0; i < count; ++i) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = lo + (hi - lo) * (x / 2 ** 32);
  }
  return out;
}
