// sam3 in the browser: sam3's C++ core compiled to WebAssembly (sam3.mjs + sam3.wasm: the
// tokenizer, preprocessing, each generation's tensors, post-processing, COCO RLE and the result
// JSON) with inference on ONNX Runtime Web (WebGPU, else WASM). This wrapper decides nothing
// about a generation: it fetches files, moves tensors between ONNX Runtime Web and the core,
// and turns the core's JSON errors into Sam3Error. Types: sam3-browser.d.ts.
//
//   import { Sam3 } from "./sam3-browser.mjs";
//   const m = await Sam3.load("/models/", { device: "auto" });   // or the user's File objects
//   const e = await m.encode(imageBitmapOrBlobOrImg);
//   const r = await m.segment(e, { text: "cat", threshold: 0.5 }); // the CLI's prompts[] entry
import createSam3Core from "./sam3.mjs";

const CACHE_NAME = "sam3-models-v1";
const ABI = 5;  // sam3_wasm.h's SAM3_WASM_ABI: the module this wrapper speaks to
// Rewritten graphs (Rewriter, sam3-rewrite-worker.mjs), keyed by their file's identity and the rewrite's options.
// The version changes with what the core's rewrites write, so an old graph is never reused.
const OPTIMIZED_CACHE_NAME = "sam3-optimized-v1";
const REWRITE_VERSION = 5;  // 5: the split places nodes late and takes Adds into products (x_add, residual)
// The ONNX Runtime Web build each device runs (docs/browser.md, "Which build"): the WebGPU
// provider's own build for WebGPU, the CPU-only build for WASM.
const ORT_BUILDS = { wasm: "ort.wasm.min.mjs", webgpu: "ort.webgpu.min.mjs" };
// The last image encode's time per model, device and build (localStorage): the estimate a page
// shows before the next one, since ONNX Runtime Web's run reports no progress of its own.
const ENCODE_TIMES_KEY = "sam3-encode-ms";
const ONNX_TYPES = { float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7, bool: 9, float16: 10 };
const ARRAYS = {
  float32: Float32Array, uint8: Uint8Array, int32: Int32Array, int64: BigInt64Array,
  bool: Uint8Array, float16: Uint16Array,
};

export class Sam3Error extends Error {
  constructor(code, message) {
    super(message);
    this.name = "Sam3Error";
    this.code = code;
  }
}

let corePromise = null;
function loadCore() {
  corePromise ??= createSam3Core().then((core) => {
    const { abi } = JSON.parse(core.UTF8ToString(core._sam3_abi_version()));
    if (abi !== ABI) throw new Sam3Error("runtime", `sam3.wasm speaks ABI ${abi}, this sam3-browser.mjs ${ABI}: serve the two from one build`);
    return core;
  });
  return corePromise;
}

// One call of a core function: strings in, JSON out (an {"error"} answer throws).
function call(core, name, ...args) {
  const allocated = [];
  const cargs = args.map((a) => {
    if (typeof a !== "string") return a;
    const n = core.lengthBytesUTF8(a) + 1;
    const p = core._malloc(n);
    core.stringToUTF8(a, p, n);
    allocated.push(p);
    return p;
  });
  try {
    const answer = JSON.parse(core.UTF8ToString(core[`_${name}`](...cargs)));
    if (answer.error) throw new Sam3Error(answer.error.code, answer.error.message);
    return answer;
  } finally {
    for (const p of allocated) core._free(p);
  }
}

// Copies of the core's tensors (its memory is reused by the next call) as ONNX Runtime tensors.
function ortTensors(ort, core, list) {
  const out = {};
  for (const t of list) {
    const Array = ARRAYS[t.dtype];
    const bytes = core.HEAPU8.slice(t.ptr, t.ptr + t.bytes);
    out[t.name] = new ort.Tensor(t.dtype, new Array(bytes.buffer), t.shape);
  }
  return out;
}

function stageOutputs(core, handle, outputs) {
  for (const [name, tensor] of Object.entries(outputs)) {
    const type = ONNX_TYPES[tensor.type];
    if (type === undefined) continue;  // not a type the core reads
    const data = tensor.data;
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    const namePtr = core._malloc(core.lengthBytesUTF8(name) + 1);
    core.stringToUTF8(name, namePtr, core.lengthBytesUTF8(name) + 1);
    const shape = JSON.stringify(tensor.dims);
    const shapePtr = core._malloc(shape.length + 1);
    core.stringToUTF8(shape, shapePtr, shape.length + 1);
    const ptr = core._sam3_stage_output(handle, namePtr, shapePtr, type, bytes.byteLength);
    core._free(namePtr);
    core._free(shapePtr);
    if (!ptr && bytes.byteLength) throw new Sam3Error("runtime", `cannot hold the output '${name}' (${bytes.byteLength} bytes)`);
    core.HEAPU8.set(bytes, ptr);
  }
}

// A session's inputs and outputs as the core reads them ({file, inputs, outputs}).
function partSpec(file, session) {
  const side = (names, metadata) => names.map((name, i) => {
    const m = metadata?.[i];
    if (!m || m.isTensor === false) return { name, type: 0, shape: [] };
    return { name, type: ONNX_TYPES[m.type] ?? 0, shape: (m.shape ?? []).map((d) => (typeof d === "number" ? d : -1)) };
  });
  return { file, inputs: side(session.inputNames, session.inputMetadata), outputs: side(session.outputNames, session.outputMetadata) };
}

async function readWithProgress(response, onChunk) {
  if (!response.body) return new Uint8Array(await response.arrayBuffer());
  const reader = response.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    onChunk(loaded);
  }
  const out = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

// A body of known size streamed to write(bytes, at) chunk by chunk: the tab never holds the
// file as JavaScript chunks and their concatenation at once.
async function streamBody(response, total, url, write, onChunk) {
  const reader = response.body.getReader();
  let at = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (at + value.byteLength > total) {
      await reader.cancel();
      throw new Sam3Error("model_not_found", `${url}: longer than the ${total} bytes its Content-Length says`);
    }
    write(value, at);
    at += value.byteLength;
    onChunk(at);
  }
  if (at !== total) throw new Sam3Error("model_not_found", `${url}: ${at} bytes of the ${total} its Content-Length says`);
}

// A large view sent to Cache Storage in slices, so that no whole copy is made in the tab.
function streamOf(view) {
  const SLICE = 16 << 20;
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= view.byteLength) return controller.close();
      const n = Math.min(SLICE, view.byteLength - at);
      controller.enqueue(view.slice(at, at + n));
      at += n;
    },
  });
}

// Where the files come from: a URL prefix (probed by name, cached in Cache Storage) or Files.
class UrlSource {
  constructor(prefix, options) {
    this.prefix = prefix.endsWith("/") ? prefix : `${prefix}/`;
    this.where = this.prefix;
    this.cache = options.cache !== false && typeof caches !== "undefined";
    this.onProgress = options.onProgress;
    // The folder's file names when the host lists them (sam3 serve's config.json): the
    // candidates are then looked up, not probed (a probe per candidate name, most of them 404s).
    this.files = options.files ? new Set(options.files) : null;
  }

  async names(candidates) {
    if (this.files) return candidates.filter((n) => this.files.has(n));
    const found = await Promise.all(candidates.map(async (name) => {
      if (this.cache && (await (await caches.open(CACHE_NAME)).match(this.prefix + name))) return name;
      const r = await fetch(this.prefix + name, { method: "HEAD" }).catch(() => null);
      return r && r.ok ? name : null;
    }));
    return found.filter(Boolean);
  }

  async bytes(name) {
    let dest;
    await this.readInto(name, (size) => {
      dest = new Uint8Array(size);
      return (bytes, at) => dest.set(bytes, at);
    });
    return dest;
  }

  // The file streamed to open(size)'s write(bytes, at) when its size is known (else read whole,
  // then written).
  async readInto(name, open) {
    const url = new URL(this.prefix + name, globalThis.location?.href).href;
    const cache = this.cache ? await caches.open(CACHE_NAME) : null;
    let response = cache ? await cache.match(url) : null;
    const cached = Boolean(response);
    if (!response) {
      response = await this.fetchFile(url, name);
      if (!response.ok) throw new Sam3Error("model_not_found", `${url}: HTTP ${response.status}`);
      if (cache) {
        try {
          await cache.put(url, response.clone());
        } catch {
          // a full quota only costs the next download
        }
      }
    }
    const total = Number(response.headers.get("content-length")) || 0;
    const progress = (loaded) => this.onProgress?.({ stage: "download", file: name, loaded, total, cached });
    const encoded = (response.headers.get("content-encoding") ?? "identity") !== "identity";
    if (!total || encoded || !response.body) {
      const whole = await readWithProgress(response, progress);
      open(whole.byteLength)(whole, 0);
      return;
    }
    await streamBody(response, total, url, open(total), progress);
  }
}

// Large files come in byte ranges where the server takes them (sam3 serve's /models/ does), so
// neither side holds a 0.9 GB body at once; the parts are joined into one Blob.
UrlSource.prototype.fetchFile = async function fetchFile(url, name) {
  const CHUNK = 32 << 20;
  const head = await fetch(url, { method: "HEAD" }).catch(() => null);
  const size = Number(head?.headers.get("content-length")) || 0;
  if (!head?.ok || head.headers.get("accept-ranges") !== "bytes" || size <= 2 * CHUNK) return fetch(url);
  const parts = [];
  for (let at = 0; at < size; at += CHUNK) {
    const r = await fetch(url, { headers: { Range: `bytes=${at}-${Math.min(at + CHUNK, size) - 1}` } });
    if (r.status !== 206) throw new Sam3Error("model_not_found", `${url}: HTTP ${r.status} for a byte range`);
    parts.push(await r.blob());
    this.onProgress?.({ stage: "download", file: name, loaded: Math.min(at + CHUNK, size), total: size, cached: false });
  }
  return new Response(new Blob(parts), { headers: { "Content-Length": String(size), "Content-Type": "application/octet-stream" } });
};

// Cache Storage of the graphs as rewritten for this tab, so that a second load skips the
// rewrite (and the original's bytes). A file is known by its URL and what the server says of its
// version (ETag, Last-Modified, size) or, picked from disk, by its name, size and date.
class OptimizedGraphs {
  constructor(src, rewrite, options) {
    this.src = src;
    this.rewrite = JSON.stringify({ ...rewrite, version: REWRITE_VERSION });
    this.enabled = options.cache !== false && typeof caches !== "undefined";
  }

  async key(file) {
    const identity = await this.src.identity(file);
    if (!identity) return null;
    return new URL(`/.sam3-optimized/${encodeURIComponent(`${identity}|${this.rewrite}`)}`, globalThis.location?.href).href;
  }

  async has(file) {
    if (!this.enabled) return false;
    const key = await this.key(file);
    return Boolean(key && (await (await caches.open(OPTIMIZED_CACHE_NAME)).match(key)));
  }

  async get(file) {
    if (!this.enabled) return null;
    const key = await this.key(file);
    const response = key ? await (await caches.open(OPTIMIZED_CACHE_NAME)).match(key) : null;
    if (!response) return null;
    const stats = JSON.parse(response.headers.get("x-sam3-rewrite") ?? "{}");
    // A graph the rewrite left as it was is not stored twice: the load reads the file itself.
    if (response.headers.get("x-sam3-unchanged")) return { unchanged: true, stats };
    return { bytes: new Uint8Array(await response.arrayBuffer()), stats };
  }

  // bytes: the rewritten graph (streamed in slices: no second copy), or null when the rewrite
  // left it as it was. -> whether it is stored.
  async put(file, bytes, stats) {
    if (!this.enabled) return false;
    const key = await this.key(file);
    if (!key) return false;
    const headers = { "Content-Type": "application/octet-stream", "x-sam3-rewrite": JSON.stringify(stats) };
    try {
      await (await caches.open(OPTIMIZED_CACHE_NAME)).put(key, bytes
        ? new Response(streamOf(bytes), { headers })
        : new Response("", { headers: { ...headers, "x-sam3-unchanged": "1" } }));
      return true;
    } catch {
      return false;  // a full quota only costs the next load a rewrite
    }
  }
}

UrlSource.prototype.identity = async function identity(name) {
  const url = new URL(this.prefix + name, globalThis.location?.href).href;
  const head = await fetch(url, { method: "HEAD" }).catch(() => null);
  if (!head?.ok) return null;
  const h = (k) => head.headers.get(k) ?? "";
  return `${url}|${h("etag")}|${h("last-modified")}|${h("content-length")}`;
};

class FileSource {
  constructor(files, options) {
    this.files = new Map([...files].map((f) => [f.name, f]));
    this.where = "the chosen files";
    this.onProgress = options.onProgress;
  }

  async names(candidates) {
    return candidates.filter((n) => this.files.has(n));
  }

  async identity(name) {
    const f = this.files.get(name);
    return f ? `file:${f.name}|${f.size}|${f.lastModified}` : null;
  }

  async bytes(name) {
    const f = this.files.get(name);
    const data = new Uint8Array(await f.arrayBuffer());
    this.onProgress?.({ stage: "download", file: name, loaded: data.byteLength, total: data.byteLength, cached: true });
    return data;
  }

  // The file read in slices to open(size)'s write(bytes, at) (no whole copy in JavaScript).
  async readInto(name, open) {
    const SLICE = 32 << 20;
    const f = this.files.get(name);
    const write = open(f.size);
    for (let at = 0; at < f.size; at += SLICE) {
      write(new Uint8Array(await f.slice(at, Math.min(at + SLICE, f.size)).arrayBuffer()), at);
      this.onProgress?.({ stage: "download", file: name, loaded: Math.min(at + SLICE, f.size), total: f.size, cached: true });
    }
  }
}

// The graph the tab runs fastest, rewritten by the core before the session is made
// (docs/browser.md): attention fused into MultiHeadAttention, on WASM looped over query chunks
// (its kernel has no flash path and would hold every score of a global block at once); on WebGPU
// the int8 products as float operators, which its provider has kernels for (the weights stay
// uint8/int8). The rewrite runs in a worker (sam3-rewrite-worker.mjs) that the load terminates
// before it makes any session, which is what hands the rewrite's memory back: a WebAssembly
// memory never shrinks. Each file is streamed into the worker's core in slices (no whole
// JavaScript copy), and the core rewrites it in place of the input (two copies at most).
class Rewriter {
  constructor() {
    this.worker = new Worker(new URL("./sam3-rewrite-worker.mjs", import.meta.url), { type: "module" });
    this.pending = null;
    const fail = (message) => {
      this.failed = new Sam3Error("runtime", message);
      this.pending?.reject(this.failed);
    };
    this.worker.onmessage = ({ data }) => this.pending?.resolve(data);
    this.worker.onerror = (e) => fail(`the rewrite worker (sam3-rewrite-worker.mjs) failed: ${e.message ?? "cannot load it"}`);
  }

  // -> {stats, changed, bytes}: bytes the rewritten graph, or with returnUnchanged the file when
  // nothing changed, else null.
  async rewrite(src, file, options, returnUnchanged, onProgress) {
    if (this.failed) throw this.failed;
    const BATCH = 8 << 20;  // slices posted (transferred) to the worker
    let batch = null, batchAt = 0, filled = 0;
    const flush = () => {
      if (!filled) return;
      const bytes = batch.buffer.byteLength === filled ? batch.buffer : batch.buffer.slice(0, filled);
      this.worker.postMessage({ type: "chunk", at: batchAt, bytes }, [bytes]);
      batch = null;
      filled = 0;
    };
    await src.readInto(file, (size) => {
      this.worker.postMessage({ type: "begin", file, size });
      return (bytes, at) => {
        for (let from = 0; from < bytes.byteLength;) {
          if (!batch) {
            batch = new Uint8Array(Math.min(BATCH, size - at - from));
            batchAt = at + from;
          }
          const n = Math.min(bytes.byteLength - from, batch.byteLength - filled);
          batch.set(bytes.subarray(from, from + n), filled);
          filled += n;
          from += n;
          if (filled === batch.byteLength) flush();
        }
      };
    });
    flush();
    onProgress?.({ stage: "rewrite", file, loaded: 0, total: 1 });
    const answer = await new Promise((resolve, reject) => {
      if (this.failed) return reject(this.failed);  // e.g. the worker's script did not load
      this.pending = { resolve, reject };
      this.worker.postMessage({ type: "rewrite", options, returnUnchanged });
    });
    this.pending = null;
    if (answer.error) throw new Sam3Error(answer.error.code, `${file}: ${answer.error.message}`);
    onProgress?.({ stage: "rewrite", file, loaded: 1, total: 1 });
    return { stats: answer.stats, changed: answer.changed, bytes: answer.bytes };
  }

  terminate() {
    this.worker.terminate();
  }
}

async function gunzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// -> {device, reason}. "auto" takes WebGPU on a hardware adapter only: a software adapter
// (SwiftShader, Chromium's fallback where no GPU is usable) runs the same graphs on the CPU
// several times slower than WASM does (docs/browser.md, "Measured").
async function pickDevice(requested) {
  if (requested === "wasm") return { device: "wasm", reason: "asked for" };
  const adapter = globalThis.navigator?.gpu ? await navigator.gpu.requestAdapter().catch(() => null) : null;
  if (requested === "webgpu") {
    if (adapter) return { device: "webgpu", reason: "asked for" };
    throw new Sam3Error("webgpu_unavailable", "this browser gives no WebGPU adapter (navigator.gpu is missing or has no "
      + "adapter): use device \"wasm\", or a browser with WebGPU enabled");
  }
  if (!adapter) return { device: "wasm", reason: "no WebGPU adapter in this browser" };
  const info = adapter.info ?? {};
  const name = [info.vendor, info.architecture, info.device].filter(Boolean).join(" ") || "an adapter";
  if (adapter.isFallbackAdapter || info.isFallbackAdapter || /swiftshader/i.test(`${info.vendor} ${info.architecture}`)) {
    return { device: "wasm", reason: `the only WebGPU adapter is a software one (${name}), slower than WASM` };
  }
  return { device: "webgpu", reason: `a GPU adapter (${name})` };
}

// -> {kernel, build, int8: {on, reason}, attention: {on, reason}, float: {on, reason}, module}: the tab's own kernels
// (sam3-int8.mjs: the int8 product, attention and the float product in one module) on WASM where the choices and the
// CPU allow them ("auto": the probe decides the build; "relaxed" or "simd128": forced; "off").
async function loadKernels(device, int8, attention, float, threads) {
  const none = (reason) => ({ kernel: null, int8: { on: false, reason }, attention: { on: false, reason }, float: { on: false, reason } });
  if (device !== "wasm") return none("WebGPU runs these operators");
  if (int8 === "off" && attention === "off" && float === "off") return none("asked for");
  const module = await import("./sam3-int8.mjs").catch(() => null);
  if (!module) return none("sam3-int8.mjs is not served beside the module");
  const loaded = await module.Kernels.load({ int8, attention, float, threads }).catch((e) => none(`the kernels did not load (${e.message})`));
  return { ...loaded, module };
}

async function pixels(image) {
  if (typeof ImageData !== "undefined" && image instanceof ImageData) return image;
  let bitmap = image;
  if (!(typeof ImageBitmap !== "undefined" && image instanceof ImageBitmap)) {
    try {
      bitmap = await createImageBitmap(image, { colorSpaceConversion: "none", premultiplyAlpha: "none", imageOrientation: "from-image" });
    } catch (e) {  // the browser's decoder refused it: the same error as natively, not a DOMException
      throw new Sam3Error("image_unreadable", `the browser cannot decode this image (${e.message}); give a PNG, JPEG, WebP or BMP`);
    }
  }
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  ctx.drawImage(bitmap, 0, 0);
  return ctx.getImageData(0, 0, bitmap.width, bitmap.height);
}

// The image's id in an answer: POST /v1/images' id for the same file (the first 16 bytes of its
// SHA-256, in hex) where the tab can hash its bytes (a Blob, in a secure context), else "local".
async function imageId(image) {
  if (!(typeof Blob !== "undefined" && image instanceof Blob) || !globalThis.crypto?.subtle) return "local";
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", await image.arrayBuffer()));
  return [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// The model's name in an answer: its folder's, as natively (never a path).
function folderName(src) {
  if (src instanceof UrlSource) return new URL(src.prefix, globalThis.location?.href ?? "http://localhost/").pathname.split("/").filter(Boolean).pop() ?? "";
  const file = [...src.files.values()].find((f) => f.webkitRelativePath);
  return file ? file.webkitRelativePath.split("/")[0] : "";
}

export class Sam3 {
  // source: a URL prefix of a model folder ("/models/") or the folder's File objects.
  // options: {device: "auto"|"webgpu"|"wasm", ort (the onnxruntime-web module, else imported
  // from options.ortUrl or ./ort/, the build chosen for the device: ORT_BUILDS), cache (Cache
  // Storage for the files and their rewritten graphs, default true), onProgress({stage, file,
  // loaded, total}), vocabulary (URL of a fallback vocabulary), threads (WASM threads; default
  // one per core), fuseAttention (attention as MultiHeadAttention; default true),
  // attentionChunk (its queries per chunk on WASM, more over fewer keys; default 256, 0 for none), int8Kernel and
  // attentionKernel, floatKernel (the tab's own kernels on WASM: "auto", "off", "relaxed", "simd128"; defaults "auto", "off" and
  // "off"), floatMinRows (the float products the float kernel takes: over at least this many rows; default 1024), int8AsFloat (the
  // int8 products as float operators; default on WebGPU only), logSeverityLevel (ONNX
  // Runtime's, default 3), sessionOptions (more ONNX Runtime session options, e.g.
  // enableProfiling)}.
  static async load(source, options = {}) {
    const started = performance.now();
    const core = await loadCore();
    const { device, reason: deviceReason } = await pickDevice(options.device ?? "auto");
    const ortUrl = new URL(options.ortUrl ?? `./ort/${ORT_BUILDS[device]}`, options.ortUrl ? globalThis.location?.href : import.meta.url).href;
    const ort = options.ort ?? (await import(ortUrl));
    if (!options.ort) ort.env.wasm.wasmPaths = new URL(".", ortUrl).href;
    // One thread per core, as natively (ONNX Runtime Web's default is half of them); threads
    // need cross-origin isolation. Taken by the first session this page creates.
    if (globalThis.crossOriginIsolated) ort.env.wasm.numThreads = options.threads || navigator.hardwareConcurrency || 1;
    const src = typeof source === "string" || source instanceof URL ? new UrlSource(String(source), options) : new FileSource(source, options);
    const { candidates, vocabularies, external_data: dataSuffixes } = call(core, "sam3_layout_candidates");
    let names = await src.names([...candidates, ...vocabularies]);
    // The hub's layout (geti-instant-learn): the graphs under onnx/, the tokenizer at the root.
    let graphs = "";
    if (!candidates.some((c) => names.includes(c))) {
      const nested = await src.names(candidates.map((c) => `onnx/${c}`));
      if (nested.length) {
        graphs = "onnx/";
        names = [...names, ...nested.map((n) => n.slice(graphs.length))];
      }
    }
    const chosen = call(core, "sam3_choose_files", src.where + graphs, JSON.stringify(names));
    for (const part of Object.keys(chosen.parts)) chosen.parts[part] = graphs + chosen.parts[part];
    const providers = device === "webgpu" ? ["webgpu", "wasm"] : ["wasm"];
    const rewrite = {
      fuse_attention: options.fuseAttention ?? true,
      attention_chunk: device === "wasm" ? (options.attentionChunk ?? 256) : 0,
      int8_as_float: options.int8AsFloat ?? device === "webgpu",
    };
    // The tab's own kernels (sam3-int8.mjs): the image encoder's and the decoders' int8 linear
    // layers where the CPU computes relaxed SIMD's dot product exactly, the decoders' attention
    // (MultiHeadAttention, not chunked: the kernel streams over keys) where asked for; ONNX
    // Runtime's kernels run the rest, and everything where the kernels are off.
    const threads = globalThis.crossOriginIsolated ? ort.env.wasm.numThreads : 1;
    // Attention in the tab's kernel only when asked for: measured no faster than ONNX Runtime
    // Web's here (docs/browser.md), and it adds segments.
    const kernels = await loadKernels(device, options.int8Kernel ?? "auto", options.attentionKernel ?? "off", options.floatKernel ?? "off",
      threads);
    // Not the interactive model's decoder: its attention is a tenth of a click (over 7 or so
    // prompt tokens), less than what the segments around it cost (measured: docs/browser.md).
    // The float kernel: the decoders' float products by constant weights over many rows (the
    // interactive model's image-side projections; docs/browser.md, "The tab's own float product").
    const splitOf = (part) => ({ linears: kernels.int8.on && part !== "text",
      attention: kernels.attention.on && part !== "image" && part !== "text" && !chosen.interactive,
      matmuls: kernels.float.on && part !== "image" && part !== "text" });
    const rewriteOf = (part) => {
      const { linears, attention, matmuls } = splitOf(part);
      return { ...rewrite, ...(linears ? { split_linears: true } : {}),
        ...(attention ? { split_attention: true, attention_chunk: 0 } : {}),
        ...(matmuls ? { split_matmuls: true, matmul_min_rows: options.floatMinRows ?? 1024 } : {}) };
    };
    const rewritingOf = (part) => rewrite.fuse_attention || rewrite.int8_as_float || Object.values(splitOf(part)).some(Boolean);
    const rewriting = Object.keys(chosen.parts).some(rewritingOf);
    // One cache key per rewrite (OptimizedGraphs keys its entries by the rewrite's options).
    const graphsByRewrite = new Map();
    const optimizedOf = (part) => {
      const key = JSON.stringify(rewriteOf(part));
      if (!graphsByRewrite.has(key)) graphsByRewrite.set(key, new OptimizedGraphs(src, rewriteOf(part), options));
      return graphsByRewrite.get(key);
    };
    const sessions = {};
    const parts = {};
    const rewrites = {};
    // First every rewrite the caches do not hold, in a worker ended before any session is made
    // (ONNX Runtime's memory grows with each session and never shrinks either, so the two are
    // never at their largest together); the rewritten graphs go to Cache Storage, or are kept
    // here when it is off or full.
    const kept = {};
    if (rewriting) {
      let rewriter = null;
      try {
        for (const [part, file] of Object.entries(chosen.parts)) {
          const optimized = optimizedOf(part);
          if (!rewritingOf(part) || await optimized.has(file)) continue;
          rewriter ??= new Rewriter();
          const r = await rewriter.rewrite(src, file, rewriteOf(part), !optimized.enabled, options.onProgress);
          rewrites[part] = r.stats;
          const stored = await optimized.put(file, r.changed ? r.bytes : null, r.stats);
          if (!stored && r.bytes) kept[part] = r.bytes;
        }
      } finally {
        rewriter?.terminate();
      }
    }
    for (const [part, file] of Object.entries(chosen.parts)) {
      let bytes = kept[part] ?? null;
      delete kept[part];
      if (!bytes && rewritingOf(part)) {
        const stored = await optimizedOf(part).get(file);
        if (stored && !rewrites[part]) rewrites[part] = { ...stored.stats, cached: true };
        bytes = stored?.bytes ?? null;
      }
      bytes ??= await src.bytes(file);
      // Weights stored beside the graph (ONNX external data, named in the graph by file name).
      const externalData = [];
      for (const name of await src.names(dataSuffixes.map((s) => file + s))) {
        // The graph names its weights by file name, relative to its own folder (onnx/).
        externalData.push({ path: name.split("/").pop(), data: await src.bytes(name) });
      }
      try {
        const sessionOptions = { executionProviders: providers, logSeverityLevel: options.logSeverityLevel ?? 3,
          ...(options.sessionOptions ?? {}), ...(externalData.length ? { externalData } : {}) };
        const bundle = kernels.kernel ? kernels.module.readBundle(bytes) : null;
        sessions[part] = bundle ? await kernels.module.SplitSession.create(ort, bundle, sessionOptions, kernels.kernel)
          : await ort.InferenceSession.create(bytes, sessionOptions);
      } catch (e) {
        const text = String(e?.message ?? e);
        if (/memory|allocation|RangeError/i.test(text)) {
          throw new Sam3Error("out_of_memory", `${file}: not enough memory for this model in the tab (${text}); close other tabs or use a smaller model`);
        }
        throw new Sam3Error("model_mismatch", `${file}: ONNX Runtime Web cannot load it: ${text}`);
      } finally {
        bytes = null;
      }
      parts[part] = partSpec(file, sessions[part]);
    }
    const info = call(core, "sam3_create", JSON.stringify({ layout: chosen.layout, candidates: chosen.candidates, parts }));
    const vocabName = vocabularies.find((v) => names.includes(v));
    let vocab;
    if (info.interactive) {
      // The interactive model takes no text: no vocabulary.
    } else if (vocabName) vocab = { name: vocabName, bytes: await src.bytes(vocabName) };
    else if (options.vocabulary) {
      const r = await fetch(options.vocabulary);
      if (!r.ok) throw new Sam3Error("tokenizer", `${options.vocabulary}: HTTP ${r.status}`);
      vocab = { name: new URL(options.vocabulary, globalThis.location?.href).pathname.split("/").pop(), bytes: new Uint8Array(await r.arrayBuffer()) };
    } else {
      throw new Sam3Error("tokenizer", `${src.where} holds no vocabulary (${vocabularies.join(", ")}); give options.vocabulary`);
    }
    if (vocab?.name.endsWith(".gz")) vocab.bytes = await gunzip(vocab.bytes);
    const model = new Sam3Model(core, ort, info, sessions, device);
    model.rewrites = rewrites;
    model.ortBuild = options.ort ? "the given module" : ortUrl.split("/").pop();
    const imageFile = chosen.parts.image;
    model.timingKey = JSON.stringify([await src.identity(imageFile) ?? imageFile, device, model.ortBuild,
      device === "wasm" ? (globalThis.crossOriginIsolated ? ort.env.wasm.numThreads : 1) : 0, rewrite,
      ...(kernels.kernel ? [kernels.build, kernels.int8.on, kernels.attention.on, kernels.float.on] : [])]);
    model.deviceReason = deviceReason;
    const split = (part) => Boolean(kernels.kernel) && sessions[part] instanceof kernels.module.SplitSession;
    model.int8Kernel = { build: split("image") && kernels.int8.on ? kernels.build : null, reason: !kernels.int8.on || split("image")
      ? kernels.int8.reason
      : `the image encoder has no int8 linear layer to run in it${rewrites.image?.split_refused ? ` (${rewrites.image.split_refused})` : ""}` };
    const attentionParts = Object.keys(sessions).filter((p) => splitOf(p).attention && split(p));
    model.attentionKernel = { build: attentionParts.length ? kernels.build : null, parts: attentionParts,
      reason: !kernels.attention.on || attentionParts.length ? kernels.attention.reason
        : chosen.interactive ? "the interactive model's attention is left to ONNX Runtime Web (a small part of a click)"
          : "no network has attention to run in it" };
    const floatParts = Object.keys(sessions).filter((p) => splitOf(p).matmuls && split(p) && (rewrites[p]?.float_matmuls ?? 0) > 0);
    model.floatKernel = { build: floatParts.length ? kernels.build : null, parts: floatParts,
      reason: !kernels.float.on || floatParts.length ? kernels.float.reason : "no decoder has a float product large enough to run in it" };
    if (kernels.kernel && !Object.keys(sessions).some(split)) kernels.kernel.release();  // nothing was split: the kernel's threads go
    if (vocab) model.setVocabulary(vocab.bytes, vocab.name);
    model.name = folderName(src);
    model.loadMs = performance.now() - started;
    return model;
  }
}

export class Sam3Model {
  constructor(core, ort, info, sessions, device) {
    this.core = core;
    this.ort = ort;
    this.info = info;
    this.handle = info.handle;
    this.sessions = sessions;
    this.device = device;
    this.layout = info.layout;
    this.generation = info.generation;
    this.quirks = info.quirks;
    this.inputWidth = info.input_width;
    this.inputHeight = info.input_height;
    this.textCache = new Map();
    this.queue = Promise.resolve();  // see exclusive()
    this.warnings = [];
    if (!globalThis.crossOriginIsolated) {
      this.warnings.push("the page is not cross-origin isolated (COOP/COEP headers): WASM runs on one thread");
    }
  }

  setVocabulary(bytes, name) {
    const p = this.core._malloc(bytes.byteLength);
    this.core.HEAPU8.set(bytes, p);
    try {
      call(this.core, "sam3_set_vocabulary", this.handle, p, bytes.byteLength, name);
    } finally {
      this.core._free(p);
    }
  }

  // `sam3 tokenize`'s object: {text, ids, mask}.
  tokenize(text) {
    return call(this.core, "sam3_tokenize", this.handle, text);
  }

  // What the next image encode should take: {ms, basis, at} from the last encode of this model
  // (same files, device, build, threads and rewrites) in this browser, remembered in
  // localStorage; null before the first one. Not a prediction from the graph: a measurement.
  get encodeEstimate() {
    try {
      const known = JSON.parse(globalThis.localStorage?.getItem(ENCODE_TIMES_KEY) ?? "{}")[this.timingKey];
      return known ? { ms: known.ms, at: known.at, basis: "the last image encode of this model on this device" } : null;
    } catch {
      return null;  // storage refused (private mode, a sandboxed frame)
    }
  }

  rememberEncode(ms) {
    try {
      const all = JSON.parse(globalThis.localStorage?.getItem(ENCODE_TIMES_KEY) ?? "{}");
      all[this.timingKey] = { ms: Math.round(ms), at: new Date().toISOString() };
      const kept = Object.entries(all).sort((a, b) => (a[1].at < b[1].at ? 1 : -1)).slice(0, 20);  // a bounded record
      globalThis.localStorage?.setItem(ENCODE_TIMES_KEY, JSON.stringify(Object.fromEntries(kept)));
    } catch {
      // storage refused or full: the next encode has no estimate
    }
  }

  // image: ImageBitmap, ImageData, an <img>, a Blob/File. Resolves to an embedding for segment().
  // onProgress({stage: "encode", loaded: 0|1, total: 1, estimate_ms}) before and after the run
  // (ONNX Runtime Web's run blocks the page's thread on WASM and reports nothing between).
  encode(image, { onProgress } = {}) {
    return this.exclusive(() => this.encodeNow(image, onProgress));
  }

  // The core holds one plan per model and a session runs one request at a time, so calls made
  // together (Promise.all over prompts, a click during an encode) run one after the other, in
  // the order they were made; a failed call does not stop the ones queued behind it.
  exclusive(work) {
    if (this.released) return Promise.reject(new Sam3Error("invalid_argument", "this model was released: load it again"));
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }

  async encodeNow(image, onProgress) {
    const t0 = performance.now();
    const rgba = await pixels(image);
    const p = this.core._malloc(rgba.data.byteLength);
    this.core.HEAPU8.set(rgba.data, p);
    let inputs;
    try {
      inputs = ortTensors(this.ort, this.core, call(this.core, "sam3_image_inputs", this.handle, p, rgba.width, rgba.height).tensors);
    } finally {
      this.core._free(p);
    }
    const t1 = performance.now();
    const estimate = this.encodeEstimate;
    onProgress?.({ stage: "encode", loaded: 0, total: 1, estimate_ms: estimate?.ms ?? null });
    const outputs = await this.sessions.image.run(inputs);
    const ms = performance.now() - t1;
    this.rememberEncode(ms);
    onProgress?.({ stage: "encode", loaded: 1, total: 1, estimate_ms: estimate?.ms ?? null });
    const keep = new Set([...this.info.image_feeds, ...Object.values(this.info.geometry_image_feeds)]);
    const features = {};
    for (const [name, t] of Object.entries(outputs)) {
      if (keep.has(name)) features[name] = t;
      else t.dispose?.();
    }
    return { model: this, width: rgba.width, height: rgba.height, features, image_id: await imageId(image),
      timings_ms: { preprocess: t1 - t0, encode_image: ms } };
  }

  // options: {text, boxes: [[x0,y0,x1,y1] or [x0,y0,x1,y1,"pos"|"neg"]], threshold,
  // mask_threshold, nms, min_area, max_instances} for a text model; {points: [[x, y,
  // "pos"|"neg"]], box: [x0,y0,x1,y1], multimask} or {everything: true, points_per_side} for
  // the interactive one (the server's /v1/segment prompt entries). Resolves to the CLI's
  // prompts[] entry. A click decodes the embedding as it is: nothing is encoded again.
  async segment(embedding, options = {}) {
    if (embedding?.model !== this) throw new Sam3Error("invalid_argument", "this embedding was made by another model");
    const clicked = this.info.interactive || "points" in options || "box" in options || "everything" in options;
    let request;
    if (clicked) {
      const { multimask = false, ...prompt } = options;
      request = { prompt, multimask };
    } else {
      const { text = "", boxes = [], ...rest } = options;
      request = { prompt: { text, boxes }, options: segmentOptions(rest) };
    }
    return this.exclusive(() => this.runPlan(embedding, planBody(request, embedding)));
  }

  // Every text prompt of one image ([{text, boxes}, ...] or strings) with one set of options:
  // resolves to one prompts[] entry per prompt, after the family's rule across them (EfficientSAM3
  // drops an instance that repeats a better one of another prompt), as the CLI's and the
  // server's prompts[] for the same image and prompts.
  async segmentAll(embedding, prompts, options = {}) {
    if (embedding?.model !== this) throw new Sam3Error("invalid_argument", "this embedding was made by another model");
    if (!Array.isArray(prompts)) throw new Sam3Error("invalid_argument", "prompts must be a list of {text, boxes} or strings");
    const list = prompts.map((p) => (typeof p === "string" ? { text: p, boxes: [] } : { text: p?.text ?? "", boxes: p?.boxes ?? [] }));
    return this.exclusive(() => this.runPlan(embedding, planBody({ prompts: list, options: segmentOptions(options) }, embedding)));
  }

  // The whole answer to prompts on this embedding's image, the document `sam3 segment --json` and
  // POST /v1/segment write (the library's, from the core): {model: {layout, name}, images:
  // [{image_id, width, height, prompts}], timings_ms}. request: POST /v1/segment's body without
  // the image: {prompts: [text, {text, boxes}, ...], threshold, mask_threshold, nms, min_area,
  // max_instances} for a text model (the family's rule across the prompts), or {prompts: [{points,
  // box} | {everything, points_per_side}, ...], multimask} for the interactive one. Masks as RLE.
  async answer(embedding, request = {}) {
    if (embedding?.model !== this) throw new Sam3Error("invalid_argument", "this embedding was made by another model");
    const { prompts, multimask = false, ...options } = request ?? {};
    if (!Array.isArray(prompts) || !prompts.length) throw new Sam3Error("invalid_argument", "prompts must be a non-empty list");
    if ((options.mask_format ?? "rle") !== "rle") {
      throw new Sam3Error("invalid_argument", `the browser module writes masks as RLE (mask_format "rle"), not "${options.mask_format}"`);
    }
    const clicked = (p) => p !== null && typeof p === "object" && ("points" in p || "box" in p || "everything" in p);
    const clicks = prompts.filter(clicked).length;
    if (clicks && clicks !== prompts.length) {
      throw new Sam3Error("invalid_argument", "text prompts and clicked objects go to two models: a tab's model answers one kind");
    }
    return this.exclusive(async () => {
      const t = { encode_text: 0, decode: 0, postprocess: 0 };
      const add = () => { for (const k of Object.keys(t)) t[k] += this.lastTimings[k]; };
      let entries = [];
      if (clicks) {
        for (const prompt of prompts) {
          entries.push(await this.runPlan(embedding, planBody({ prompt, multimask }, embedding)));
          add();
        }
      } else {
        const list = prompts.map((p) => (typeof p === "string" ? { text: p, boxes: [] } : { text: p?.text ?? "", boxes: p?.boxes ?? [] }));
        entries = await this.runPlan(embedding, planBody({ prompts: list, options: segmentOptions(options) }, embedding));
        add();
      }
      return call(this.core, "sam3_answer", JSON.stringify({
        model: { layout: this.layout, name: this.name ?? "" }, image_id: embedding.image_id ?? "local",
        width: embedding.width, height: embedding.height, prompts: entries,
        timings_ms: { load: this.loadMs ?? 0, preprocess: 0, encode_image: 0, ...t, image_cached: true } }));
    });
  }

  // The core's plan for a prompt (sam3_wasm.h): it names each session to run, its tensors and
  // its feeds (the embedding's outputs, or a text encoder's outputs kept by key); this only
  // moves tensors, and keeps a text encoder's outputs per text as the native cache does.
  async runPlan(embedding, request) {
    const timings = { encode_text: 0, decode: 0, postprocess: 0, runs: 0 };
    let t = performance.now();
    let step = call(this.core, "sam3_plan", this.handle, request);
    while (step.run) {
      const { session, tensors, feeds: from, keep, stage } = step.run;
      let outputs = keep ? this.textCache.get(keep) : null;
      const cached = Boolean(outputs);
      if (!outputs) {
        const feeds = ortTensors(this.ort, this.core, tensors);
        for (const [input, f] of Object.entries(from)) {
          feeds[input] = f.from === "embedding" ? embedding.features[f.name] : this.textCache.get(f.key)?.[f.name];
          if (!feeds[input]) throw new Sam3Error("model_mismatch", `nothing feeds the ${session} input '${input}' (${f.from} ${f.name})`);
        }
        timings.postprocess += performance.now() - t;
        t = performance.now();
        outputs = await this.sessions[session].run(feeds);
        timings[session === "text" ? "encode_text" : "decode"] += performance.now() - t;
        timings.runs += 1;
        t = performance.now();
        if (keep) this.textCache.set(keep, outputs);
      }
      if (stage) stageOutputs(this.core, this.handle, outputs);
      if (!keep && !cached) for (const o of Object.values(outputs)) o.dispose?.();
      step = call(this.core, "sam3_step", this.handle);
    }
    timings.postprocess += performance.now() - t;
    this.lastTimings = timings;
    return step.results ?? step.result;
  }

  release() {
    const done = this.exclusive(async () => {  // after the calls already made
      for (const s of Object.values(this.sessions)) await s.release?.();
      call(this.core, "sam3_destroy", this.handle);
    });
    this.released = true;  // calls made from here on are refused
    return done;
  }
}

// The segment options the core reads (the server's names), from a request's keys.
function segmentOptions(from) {
  const opts = {};
  for (const k of ["threshold", "mask_threshold", "nms", "min_area", "max_instances"]) if (from[k] !== undefined) opts[k] = from[k];
  return opts;
}

// A plan's request as text: NaN and infinities would reach the core as null ("got null"), so
// they go as text and are named.
function planBody(request, embedding) {
  return JSON.stringify({ ...request, width: embedding.width, height: embedding.height },
    (_, v) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v));
}

// Deletes the models this origin cached and their rewritten graphs (Cache Storage).
export async function clearModelCache() {
  if (typeof caches !== "undefined") {
    await caches.delete(CACHE_NAME);
    await caches.delete(OPTIMIZED_CACHE_NAME);
  }
}
