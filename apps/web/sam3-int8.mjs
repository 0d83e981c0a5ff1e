// The tab's own kernels (docs/browser.md, "Relaxed-SIMD int8 products" and "The tab's own
// attention kernel"): one module, int8-relaxed.wasm / int8-simd128.wasm (apps/web/kernels:
// int8_gemm.c and attention.c; the files keep their first names), on a shared memory with one
// instance per thread, and SplitSession, which runs a graph split at the steps these kernels
// compute (the core's split bundle, optimize/onnx_split_graph.h) as ONNX Runtime Web segments
// with the kernel steps in between: int8 linear layers, bit for bit what ONNX Runtime computes,
// MultiHeadAttention and float products by constant weights (float_gemm.c), within float rounding.
const MR = 4;  // the int8 kernel's rows per tile: threads get multiples of it
const FLOAT_MR = 6;  // the float kernel's (float_gemm.c)
const STACK = 1 << 16;
const ORT_TYPES = { 1: "float32", 2: "uint8", 3: "int8", 6: "int32", 7: "int64", 9: "bool", 10: "float16", 11: "float64" };
const MAX_HEAD = 512;  // attention.c's largest head size

function align(n, to) {
  return Math.ceil(n / to) * to;
}

export class Kernels {
  // The module for this CPU and what runs in it. int8, attention and float (the float product):
  // "auto", "off" or a build forced ("relaxed" or "simd128", tests); defaults "auto" (int8) and
  // "off" (attention, float). The build: the relaxed one where the probe finds the CPU's relaxed
  // dot product exact, else SIMD128 (a forced choice wins); none when no kernel would run. The
  // int8 products run in it only with the relaxed build (SIMD128's is as fast as ONNX Runtime
  // Web's own) or when forced; attention and the float product run in either build (relaxed
  // SIMD's multiply-add is fused or not: both are within float rounding).
  // -> {kernel (or null), build, int8: {on, reason}, attention: {on, reason}, float: {on, reason}}.
  static async load({ int8 = "auto", attention = "off", float = "off", threads = 1, baseUrl = import.meta.url } = {}) {
    const none = (reason) => ({ kernel: null, build: null, int8: { on: false, reason }, attention: { on: false, reason },
      float: { on: false, reason } });
    if (int8 === "off" && attention === "off" && float === "off") return none("asked for");
    if (!globalThis.crossOriginIsolated) return none("the page is not cross-origin isolated (no shared memory)");
    const fetchBuild = async (name) => new Uint8Array(await (await fetch(new URL(`./int8-${name}.wasm`, baseUrl))).arrayBuffer());
    const forced = [int8, attention, float].find((c) => c === "relaxed" || c === "simd128");
    let build = forced, exact = false, why = "asked for";
    if (!forced) {
      const bytes = await fetchBuild("relaxed").catch(() => null);
      if (bytes && WebAssembly.validate(bytes)) {
        const probe = await Kernels.create(bytes, 1);
        exact = probe.exact();
        probe.release();
      }
      build = exact ? "relaxed" : "simd128";
      why = exact ? "the CPU computes relaxed SIMD's dot product exactly"
        : bytes && WebAssembly.validate(bytes) ? "this CPU's relaxed dot product is not the exact one (no VNNI lowering)"
          : "no relaxed SIMD in this browser";
    }
    const int8On = int8 !== "off" && (int8 !== "auto" || exact);
    const floatPart = (choice) => ({ on: choice !== "off", reason: choice === "off" || forced ? "asked for" : `the ${build} build (${why})` });
    const reasons = {
      int8: { on: int8On, reason: int8 === "off" ? "asked for" : int8On ? why : `${why}: ONNX Runtime Web's own int8 kernel runs` },
      attention: floatPart(attention), float: floatPart(float) };
    if (!int8On && attention === "off" && float === "off") return { kernel: null, build: null, ...reasons };  // (nothing to run: no threads started)
    const kernel = await Kernels.create(await fetchBuild(build), threads);
    kernel.build = build;
    return { kernel, build, ...reasons };
  }

  static async create(bytes, threads) {
    const module = await WebAssembly.compile(bytes);
    const memory = new WebAssembly.Memory({ initial: 64, maximum: 65536, shared: true });
    const instance = await WebAssembly.instantiate(module, { env: { memory } });
    const k = new Kernels(module, memory, instance.exports);
    if (threads > 1) await k.startWorkers(threads);
    await k.warmUp();
    return k;
  }

  // V8 runs a module's functions first as its baseline compiler made them (several times
  // slower) and optimizes them once they ran a while: a few small products and attentions on
  // every thread here, so that the first run's kernels run optimized code.
  async warmUp() {
    const k = 1024, n = 256, m = 16 * Math.max(1, this.workers.length);
    const L = this.addLinear({ weight: new Uint8Array(k * n), k, n, signed: false, zeroPoints: null,
      scales: new Float32Array([1]), bias: null });
    for (let i = 0; i < 8; ++i) await this.gemm(L, new Uint8Array(m * k), m, 0, 1, true);
    const d = { B: 1, S: 16 * Math.max(1, this.workers.length), L: 256, H: 2, dh: 32, dv: 32, scale: 0 };
    for (let i = 0; i < 8; ++i) await this.attention(new Float32Array(d.S * 64), new Float32Array(d.L * 64), new Float32Array(d.L * 64), d, true);
    const F = this.addMatMul({ weight: new Float32Array(256 * 64), k: 256, n: 64, bias: new Float32Array(64) });
    for (let i = 0; i < 8; ++i) await this.matmul(F, new Float32Array(m * 256), m, true);
  }

  constructor(module, memory, exports) {
    this.module = module;
    this.memory = memory;
    this.e = exports;
    this.top = align(exports.__heap_base.value, 64);
    this.workers = [];
    this.scratch = { at: 0, bytes: 0 };  // a product's activation and output (grown, never freed)
    this.attentionScratch = { at: 0, bytes: 0 };  // an attention's q, k, v, output and each thread's own
    this.staging = { at: 0, bytes: 0 };  // a weight before packing
    this.floatScratch = { at: 0, bytes: 0 };  // a float product's activation and output
    this.residualScratch = { at: 0, bytes: 0 };  // a residual added to a product, copied in
  }

  alloc(bytes) {
    const at = this.top;
    this.top = align(at + bytes + 16, 64);  // (16: the kernel reads up to 3 bytes past a row)
    const missing = this.top - this.memory.buffer.byteLength;
    if (missing > 0) this.memory.grow(Math.ceil(missing / 65536));
    return at;
  }

  async startWorkers(n) {
    const ready = [];
    for (let i = 0; i < n; ++i) {
      const w = new Worker(new URL("./sam3-int8-worker.mjs", import.meta.url), { type: "module" });
      const stackTop = this.alloc(STACK) + STACK;
      ready.push(new Promise((resolve, reject) => {
        w.onmessage = ({ data }) => (data.ready ? resolve() : reject(new Error(data.error)));
        w.onerror = (e) => reject(new Error(e.message));
      }));
      w.postMessage({ type: "init", module: this.module, memory: this.memory, stackTop });
      this.workers.push(w);
    }
    await Promise.all(ready);
  }

  exact() {
    return this.e.sam3_int8_exact(this.alloc(32)) === 1;
  }

  // A linear layer's weights [k, n] (uint8 or int8 bytes as stored), packed once.
  // zeroPoints: Uint8Array of 1 or n values or null; scales: Float32Array of 1 or n; bias: Float32Array(n) or null.
  addLinear({ weight, k, n, signed, zeroPoints, scales, bias }) {
    const np = align(n, 8);
    // The weight as stored, in a staging area every linear reuses (it is packed at once).
    if (weight.byteLength > this.staging.bytes) this.staging = { at: this.alloc(weight.byteLength), bytes: weight.byteLength };
    const src = this.staging.at;
    new Uint8Array(this.memory.buffer).set(weight, src);
    const zp = zeroPoints ? this.alloc(zeroPoints.byteLength) : 0;
    if (zp) new Uint8Array(this.memory.buffer).set(zeroPoints, zp);
    const L = { k, n, packed: this.alloc(np * align(k, 4)), colSum: this.alloc(np * 4), zeroOffset: this.alloc(np * 4),
      scales: this.alloc(scales.byteLength), scaleCount: scales.length, bias: bias ? this.alloc(bias.byteLength) : 0 };
    this.e.sam3_int8_pack(src, k, n, signed ? 1 : 0, zp, zeroPoints?.length ?? 0, L.packed, L.colSum, L.zeroOffset);
    new Float32Array(this.memory.buffer, L.scales, scales.length).set(scales);
    if (bias) new Float32Array(this.memory.buffer, L.bias, n).set(bias);
    return L;
  }

  // A constant float weight w [k, n] (Float32Array, row-major) and an optional bias (Float32Array(n)), packed once;
  // `pre` (a Float32Array, or its address from an earlier addMatMul's F.pre): a constant added to
  // the activation before the product, repeated over its rows (an Add the split took in: x_add).
  addMatMul({ weight, k, n, bias, pre = null }) {
    if (weight.byteLength > this.staging.bytes) this.staging = { at: this.alloc(weight.byteLength), bytes: weight.byteLength };
    new Float32Array(this.memory.buffer, this.staging.at, k * n).set(weight);
    const F = { k, n, packed: this.alloc(this.e.sam3_float_packed_size(k, n) * 4), bias: bias ? this.alloc(n * 4) : 0,
      pre: 0, preCount: 0 };
    this.e.sam3_float_pack(this.staging.at, k, n, F.packed);
    if (bias) new Float32Array(this.memory.buffer, F.bias, n).set(bias);
    if (pre instanceof Float32Array) {
      F.pre = this.alloc(pre.byteLength);
      F.preCount = pre.length;
      new Float32Array(this.memory.buffer, F.pre, pre.length).set(pre);
    } else if (pre) {
      [F.pre, F.preCount] = [pre.at, pre.count];
    }
    return F;
  }

  // y [m, n] = a [m, k] (Float32Array) times the packed weight (+ its bias) -> Float32Array: a copy,
  // or with `view` the kernel's own memory, valid until the next matmul; with `outAt` (an address
  // of m x n floats in this memory, from alloc) written there instead, and a view of it returned.
  async matmul(F, a, m, view = false, outAt = 0) {
    const need = align(m * F.k * 4, 64) + (outAt ? 0 : m * F.n * 4);
    if (need > this.floatScratch.bytes) this.floatScratch = { at: this.alloc(need), bytes: need };
    const pa = this.floatScratch.at, py = outAt || pa + align(m * F.k * 4, 64);
    new Float32Array(this.memory.buffer, pa, m * F.k).set(a.subarray(0, m * F.k));
    if (F.pre) this.e.sam3_float_add_periodic(pa, m * F.k, F.pre, F.preCount);
    await this.parallel("sam3_float_gemm", m, FLOAT_MR, (m0, m1) => [pa, m0, m1, F.k, F.packed, F.n, F.bias, py]);
    const y = new Float32Array(this.memory.buffer, py, m * F.n);
    return view || outAt ? y : y.slice();
  }

  // y [m, n] = the linear's product of a [m, k] (uint8, zero point za, scale sa) -> Float32Array:
  // a copy, or with `view` the kernel's own memory, valid until the next gemm (ONNX Runtime Web
  // copies its inputs into its own memory when it runs, so a view fed to the next run is enough);
  // with `outAt` (an address of m x n floats in this memory) written there, and a view returned.
  async gemm(L, a, m, za, sa, view = false, outAt = 0) {
    const need = align(m * L.k + 16, 64) + (outAt ? 0 : m * L.n * 4);
    if (need > this.scratch.bytes) this.scratch = { at: this.alloc(need), bytes: need };
    const pa = this.scratch.at, py = outAt || pa + align(m * L.k + 16, 64);
    new Uint8Array(this.memory.buffer).set(a, pa);
    const args = (m0, m1) => [pa, m0, m1, L.k, za, L.packed, L.colSum, L.zeroOffset, L.n, sa, L.scales, L.scaleCount, L.bias, py];
    await this.parallel("sam3_int8_gemm", m, MR, (m0, m1) => args(m0, m1));
    const y = new Float32Array(this.memory.buffer, py, m * L.n);
    return view || outAt ? y : y.slice();
  }

  // y (a view of this memory) += r (a Float32Array whose length divides y's), r repeated over y's
  // leading rows: a residual connection taken into a product, one float addition a value as ONNX
  // Runtime's Add. r is read where it is when it is a view of this memory, else copied in first.
  addInto(y, r) {
    let pr = r.byteOffset;
    if (r.buffer !== this.memory.buffer) {
      if (r.byteLength > this.residualScratch.bytes) this.residualScratch = { at: this.alloc(r.byteLength), bytes: r.byteLength };
      pr = this.residualScratch.at;
      new Float32Array(this.memory.buffer, pr, r.length).set(r);
    }
    this.e.sam3_float_add_periodic(y.byteOffset, y.length, pr, r.length);
  }

  // Rows 0..m of `fn` split across the threads (in multiples of `step`), each thread called with
  // argsOf(m0, m1, thread); on this thread alone when there is one thread or too few rows.
  async parallel(fn, m, step, argsOf) {
    if (this.workers.length < 2 || m < this.workers.length * step) {
      this.e[fn](...argsOf(0, m, 0));
      return;
    }
    const per = align(Math.ceil(m / this.workers.length), step);
    await Promise.all(this.workers.map((w, i) => new Promise((resolve, reject) => {
      const m0 = Math.min(m, i * per), m1 = Math.min(m, m0 + per);
      if (m0 >= m1) return resolve();
      w.onmessage = ({ data }) => (data.done ? resolve() : reject(new Error(`${fn}: ${data.error}`)));
      w.postMessage({ type: "call", fn, args: argsOf(m0, m1, i) });
    })));
  }

  // Attention as com.microsoft.MultiHeadAttention computes it from query q [B, S, H x dh], key k
  // [B, L, H x dh] and value v [B, L, H x dv] (Float32Arrays) -> out [B, S, H x dv]: a copy, or with
  // `view` the kernel's own memory, valid until the next attention; with `outAt` (an address of
  // B x S x H x dv floats in this memory) written there, and a view returned. scale 0: 1 / sqrt(dh).
  async attention(q, k, v, { B, S, L, H, dh, dv, scale }, view = false, outAt = 0) {
    if (dh > MAX_HEAD) throw new Error(`attention: head size ${dh} is over the kernel's ${MAX_HEAD}`);
    const threads = Math.max(1, this.workers.length);
    const own = align(this.e.sam3_attention_scratch(L, H, dh, dv), 64);
    const sizes = [q.length, k.length, v.length, outAt ? 0 : B * S * H * dv].map((n) => align(n * 4, 64));
    const need = sizes.reduce((a, b) => a + b, 0) + threads * own;
    if (need > this.attentionScratch.bytes) this.attentionScratch = { at: this.alloc(need), bytes: need };
    let at = this.attentionScratch.at;
    const [pq, pk, pv, scratchOut] = sizes.map((n) => ((at += n), at - n));
    const po = outAt || scratchOut;
    const f32 = new Float32Array(this.memory.buffer);
    f32.set(q, pq / 4), f32.set(k, pk / 4), f32.set(v, pv / 4);
    this.lastAttention = { q: pq, k: pk, v: pv, out: po, scratch: Array.from({ length: threads }, (_, i) => at + i * own) };  // (tests)
    await this.parallel("sam3_attention", B * S, 4, (r0, r1, i) => [pq, pk, pv, po, B, S, L, H, dh, dv, scale, r0, r1, at + i * own]);
    const out = new Float32Array(this.memory.buffer, po, B * S * H * dv);
    return view || outAt ? out : out.slice();
  }

  release() {
    for (const w of this.workers) w.terminate();
    this.workers = [];
  }
}

// Blocks of the kernels' memory for kernel steps' outputs, reused: taken for an output and given
// back after its last reader; the smallest free block that fits, else a new one (the kernels'
// memory never shrinks, so the blocks of one run are those of the next).
class KernelOutputs {
  constructor(kernel) {
    this.kernel = kernel;
    this.free = [];
  }

  take(bytes) {
    let best = -1;
    this.free.forEach((b, i) => {
      if (b.bytes >= bytes && (best < 0 || b.bytes < this.free[best].bytes)) best = i;
    });
    return best >= 0 ? this.free.splice(best, 1)[0] : { at: this.kernel.alloc(bytes), bytes };
  }

  give(block) {
    this.free.push(block);
  }
}

// The split bundle's header and blobs.
export function readBundle(bytes) {
  const magic = new TextDecoder().decode(bytes.subarray(0, 8));
  if (magic !== "SAM3SPL1") return null;
  const length = new DataView(bytes.buffer, bytes.byteOffset + 8, 4).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + length)));
  const base = align(12 + length, 16);
  const blob = (b) => bytes.subarray(base + b.offset, base + b.offset + b.bytes);
  return { header, blob };
}

const metadata = (list) => list.map((v) => ({ name: v.name, isTensor: true, type: ORT_TYPES[v.type] ?? "float32",
  shape: v.shape.map((d) => (d < 0 ? "?" : d)) }));

// A graph run as its segments on ONNX Runtime Web and its kernel steps (linear layers,
// attention) on the tab's kernels; the same face as an InferenceSession where sam3-browser.mjs
// uses one (names, metadata, run).
export class SplitSession {
  static async create(ort, bundle, sessionOptions, kernel) {
    const { header, blob } = bundle;
    const s = new SplitSession(ort, header, kernel);
    const added = new Map();  // x_add blob offset -> its copy in the kernels' memory
    for (const step of header.steps) {
      if (step.segment) {
        // Memory arenas off: a hundred sessions would each keep their largest activations. No
        // spinning: ONNX Runtime's threads would otherwise spin after each segment, on the cores
        // the kernel's threads compute on next.
        const extra = { ...sessionOptions.extra, session: { ...sessionOptions.extra?.session, intra_op: { allow_spinning: "0" } } };
        const session = await ort.InferenceSession.create(blob(step.segment), { enableCpuMemArena: false, ...sessionOptions, extra });
        s.steps.push({ segment: step.segment, session });
      } else if (step.attention) {
        s.steps.push({ attention: step.attention });
      } else if (step.matmul) {
        const f = step.matmul;
        const f32 = (b) => new Float32Array(blob(b).slice().buffer);
        // An Add taken into the product (x_add): one copy in the kernels' memory for the steps sharing its blob.
        const shared = f.x_add ? added.get(f.x_add.offset) : null;
        const F = kernel.addMatMul({ weight: f32(f.weight), k: f.k, n: f.n, bias: f.bias ? f32(f.bias) : null,
          pre: shared ?? (f.x_add ? f32(f.x_add) : null) });
        if (f.x_add && !shared) added.set(f.x_add.offset, { at: F.pre, count: F.preCount });
        s.steps.push({ matmul: f, kernel: F });
      } else if (step.linear) {
        const l = step.linear;
        const f32 = (b) => new Float32Array(blob(b).slice().buffer);
        s.steps.push({ linear: l, kernel: kernel.addLinear({ weight: blob(l.weight), k: l.k, n: l.n, signed: l.signed,
          zeroPoints: l.w_zero_point ? blob(l.w_zero_point) : null, scales: f32(l.w_scale), bias: l.bias ? f32(l.bias) : null }) });
      } else {
        throw new Error(`a split graph's step of an unknown kind (${Object.keys(step).join(", ")}): a newer rewrite than this module`);
      }
    }
    return s;
  }

  constructor(ort, header, kernel) {
    this.ort = ort;
    this.kernel = kernel;
    this.steps = [];
    this.inputNames = header.inputs.map((v) => v.name);
    this.outputNames = header.outputs.map((v) => v.name);
    this.inputMetadata = metadata(header.inputs);
    this.outputMetadata = metadata(header.outputs);
    this.lastUse = new Map();  // value -> the last step reading it
    this.blocks = new KernelOutputs(kernel);
    header.steps.forEach((step, i) => {
      const reads = step.segment ? step.segment.inputs : step.attention ? [step.attention.q, step.attention.k, step.attention.v]
        : step.matmul ? [step.matmul.x] : [step.linear.x, step.linear.scale, step.linear.zero_point, ...(step.linear.residual ? [step.linear.residual] : [])];
      for (const v of reads) this.lastUse.set(v, i);
    });
  }

  async run(feeds) {
    // ms of the last run: ONNX Runtime's part, the int8 kernel's, the attention kernel's, the float
    // kernel's, each step's; and the bytes copied out of the kernels' memory (the graph's outputs).
    const timings = { segments: 0, linears: 0, attention: 0, matmuls: 0, steps: [], copiedOut: 0 };
    this.lastTimings = timings;
    const values = new Map(Object.entries(feeds));
    const kept = new Set(this.outputNames);
    // Each kernel step's output stays in the kernels' memory and goes to its readers as a view: a
    // copy out would be a new JavaScript array on every run, whose fresh memory costs more than the
    // copy (docs/browser.md, "What a segment costs"). Read by the next step alone, a segment, it is
    // left in the kernel's scratch (valid until that kernel's next call, after the segment: every
    // product of the image encoder); else in a block held until its last reader ran (reused by the
    // next run). Only the graph's outputs are copied. -> the kernel call's [view, outAt].
    const held = new Map();  // value -> its block
    const place = (i, name, bytes) => {
      if (kept.has(name)) {
        timings.copiedOut += bytes;
        return [false, 0];
      }
      if (this.lastUse.get(name) === i + 1 && this.steps[i + 1]?.segment) return [true, 0];
      const block = this.blocks.take(bytes);
      held.set(name, block);
      return [false, block.at];
    };
    try {
      await this.runSteps(feeds, values, kept, timings, place, held);
    } finally {
      for (const block of held.values()) this.blocks.give(block);
    }
    const outputs = {};
    for (const name of this.outputNames) outputs[name] = values.get(name);
    return outputs;
  }

  async runSteps(feeds, values, kept, timings, place, held) {
    for (const [i, step] of this.steps.entries()) {
      if (step.segment) {
        const inputs = {};
        for (const v of step.segment.inputs) inputs[v] = values.get(v);
        const t0 = performance.now();
        const out = await step.session.run(inputs);
        timings.segments += performance.now() - t0;
        timings.steps.push(performance.now() - t0);
        for (const [name, t] of Object.entries(out)) values.set(name, t);
      } else if (step.attention) {
        const a = step.attention;
        const t0 = performance.now();
        const [q, k, v] = [values.get(a.q), values.get(a.k), values.get(a.v)];
        if (q.dims.length !== 3 || k.dims.length !== 3 || v.dims.length !== 3 || k.dims[0] !== q.dims[0] || v.dims[0] !== q.dims[0]
            || v.dims[1] !== k.dims[1] || k.dims[2] !== q.dims[2] || q.dims[2] % a.heads || v.dims[2] % a.heads) {
          throw new Error(`attention '${a.output}': query ${q.dims}, key ${k.dims} and value ${v.dims} are not [B, S, H x dh], [B, L, H x dh], [B, L, H x dv] for ${a.heads} heads`);
        }
        const [B, S, D] = q.dims, L = k.dims[1], H = a.heads;
        const o = await this.kernel.attention(q.data, k.data, v.data, { B, S, L, H, dh: D / H, dv: v.dims[2] / H, scale: a.scale },
          ...place(i, a.output, B * S * v.dims[2] * 4));
        values.set(a.output, new this.ort.Tensor("float32", o, [B, S, v.dims[2]]));
        timings.attention += performance.now() - t0;
        timings.steps.push(performance.now() - t0);
      } else if (step.matmul) {
        const f = step.matmul;
        const t0 = performance.now();
        const x = values.get(f.x);
        if (x.type !== "float32" || x.dims.at(-1) !== f.k) {
          throw new Error(`float product '${f.output}': the activation is ${x.type} [${x.dims}], its weight [${f.k}, ${f.n}] float32`);
        }
        const added = f.x_add_shape ?? [];
        if (added.length > x.dims.length || added.some((d, j) => x.dims[x.dims.length - added.length + j] !== d)) {
          throw new Error(`float product '${f.output}': the activation [${x.dims}] does not end in [${added}], the constant added to it`);
        }
        const m = x.data.length / f.k;
        const y = await this.kernel.matmul(step.kernel, x.data, m, ...place(i, f.output, m * f.n * 4));
        values.set(f.output, new this.ort.Tensor("float32", y, [...x.dims.slice(0, -1), f.n]));
        timings.matmuls += performance.now() - t0;
        timings.steps.push(performance.now() - t0);
      } else {
        const l = step.linear;
        const t0 = performance.now();
        const x = values.get(l.x);
        if (x.dims.at(-1) !== l.k) throw new Error(`int8 product '${l.output}': the activation's last dimension is ${x.dims.at(-1)}, its weight's ${l.k}`);
        const m = x.data.length / l.k, dims = [...x.dims.slice(0, -1), l.n];
        const r = l.residual ? values.get(l.residual) : null;
        const rd = r ? r.dims.slice(r.dims.findIndex((d) => d !== 1) < 0 ? r.dims.length : r.dims.findIndex((d) => d !== 1)) : [];
        if (r && (r.type !== "float32" || rd.length > dims.length || rd.some((d, j) => dims[dims.length - rd.length + j] !== d))) {
          throw new Error(`int8 product '${l.output}': the residual '${l.residual}' (${r.type} [${r.dims}]) does not fit its output [${dims}]`);
        }
        // (With a residual the product is made in the kernels' memory, the residual added there,
        // and copied out only when it is a graph output.)
        const [view, at] = place(i, l.output, m * l.n * 4);
        let y = await this.kernel.gemm(step.kernel, x.data, m, values.get(l.zero_point).data[0], values.get(l.scale).data[0],
          view || Boolean(r), at);
        if (r) {
          this.kernel.addInto(y, r.data);
          if (!view && !at) y = y.slice();
        }
        values.set(l.output, new this.ort.Tensor("float32", y, dims));
        timings.linears += performance.now() - t0;
        timings.steps.push(performance.now() - t0);
      }
      for (const [v, last] of this.lastUse) {
        if (last === i && !kept.has(v) && !(v in feeds)) values.delete(v);
      }
      // Blocks whose value has no reader left (or none at all) go back.
      for (const [v, block] of held) {
        if ((this.lastUse.get(v) ?? -1) <= i) {
          held.delete(v);
          this.blocks.give(block);
        }
      }
    }
  }

  endProfiling() {
    for (const step of this.steps) step.session?.endProfiling();
  }

  async release() {
    for (const step of this.steps) await step.session?.release();
    this.kernel.release();
  }
}
