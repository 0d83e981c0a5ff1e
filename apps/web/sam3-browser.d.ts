// Types of sam3-browser.mjs: sam3's C++ core in WebAssembly with ONNX Runtime Web.

export type Device = "auto" | "webgpu" | "wasm";

export interface Progress {
  stage: "download" | "rewrite" | "encode";
  file?: string;
  loaded: number;
  total: number;  // 0 when the server gave no length
  cached?: boolean;
  /** "encode": the last encode's time of this model here (Sam3Model.encodeEstimate), null before one. */
  estimate_ms?: number | null;
}

export interface LoadOptions {
  device?: Device;           // "auto": WebGPU on a hardware adapter, else WASM (model.deviceReason says which and why)
  ort?: unknown;             // the onnxruntime-web module; else imported from ortUrl
  ortUrl?: string;           // default: ./ort/ort.wasm.min.mjs (WASM) or ./ort/ort.webgpu.min.mjs (WebGPU) beside this module
  cache?: boolean;           // keep downloaded files and their rewritten graphs in Cache Storage (default true)
  vocabulary?: string;       // URL of a vocabulary when the folder holds none
  /** The names of the files under a URL source (relative, "onnx/x.onnx" for a subfolder), when
   * the host lists them (sam3 serve's /app/config.json "files"): looked up instead of probed by
   * name (HEAD requests, most of them 404s in the console). */
  files?: string[];
  threads?: number;          // WASM threads (default: one per core; needs cross-origin isolation)
  logSeverityLevel?: 0 | 1 | 2 | 3 | 4;  // ONNX Runtime Web's log (0: verbose)
  /** Rewrite the int8 products (DynamicQuantizeLinear -> MatMulInteger/ConvInteger) into float
   * operators WebGPU has kernels for (default: on WebGPU only); false runs the files as written. */
  int8AsFloat?: boolean;
  /** Fuse attention written op by op into com.microsoft.MultiHeadAttention (default true). */
  fuseAttention?: boolean;
  /** On WASM, the fused attention's queries per chunk, bounding its scores' memory (default
   * 256; 0: one chunk); over fewer keys than that, chunks grow to hold as many scores
   * (at most attentionChunk x max(keys, attentionChunk) per head). */
  attentionChunk?: number;
  /** On WASM, the image encoder's int8 linear layers in the tab's own kernel (sam3-int8.mjs):
   * "auto" (default) where the CPU computes relaxed SIMD's dot product exactly (x86 with
   * AVX-VNNI), else ONNX Runtime Web's kernels; "off"; "relaxed" or "simd128" forced (tests). */
  int8Kernel?: "auto" | "off" | "relaxed" | "simd128";
  /** On WASM, the text decoders' attention (MultiHeadAttention, after fusion) in the tab's own
   * kernel (sam3-int8.mjs, the same module as the int8 kernel): "off" (default: ONNX Runtime
   * Web's, in query chunks; the kernel measured no faster on Zen 5, docs/browser.md); "auto"
   * (the relaxed build where the int8 probe passes, else SIMD128); "relaxed" or "simd128"
   * forced. Never for the interactive model's decoder. */
  attentionKernel?: "auto" | "off" | "relaxed" | "simd128";
  /** On WASM, the decoders' float products by constant weights over at least floatMinRows rows
   * (default 1024: the interactive model's image-side projections) in the tab's own float
   * kernel (the same module): "off" (default, docs/browser.md "The tab's own float product");
   * "auto" (the relaxed build where the int8 probe passes, else SIMD128); "relaxed" or
   * "simd128" forced. */
  floatKernel?: "auto" | "off" | "relaxed" | "simd128";
  floatMinRows?: number;
  /** More ONNX Runtime Web session options (e.g. enableProfiling). */
  sessionOptions?: Record<string, unknown>;
  onProgress?: (p: Progress) => void;
}

/** [x0, y0, x1, y1] in pixels of the image, optionally labelled. */
export type BoxPrompt = [number, number, number, number] | [number, number, number, number, "pos" | "neg"];

export interface SegmentOptions {
  text?: string;             // a noun phrase; empty with boxes: a box-only prompt
  boxes?: BoxPrompt[];       // exemplar boxes (samexporter models: one per prompt)
  threshold?: number;        // score threshold, 0..1 (default 0.5)
  mask_threshold?: number;   // 0..1 (default 0.5)
  nms?: number;              // mask-IoU NMS when > 0
  min_area?: number;         // drop instances with fewer mask pixels
  max_instances?: number;    // keep the best N; 0 keeps all
}

/** A click in pixels of the image: "pos" (default) is on the object, "neg" is not. */
export type PointPrompt = [number, number] | [number, number, "pos" | "neg"];

/** One clicked object for the interactive (sam3-tracker) model, as POST /v1/segment's prompt
 * entry: at least one positive point or the box; at most 64 points; inside the image. */
export interface ClickOptions {
  points?: PointPrompt[];
  box?: [number, number, number, number] | null;
  multimask?: boolean;       // all three candidate masks, best predicted IoU first
}

/** "Segment everything" (SAM's automatic mask generator) on the interactive model, as the
 * server takes it: a points_per_side x points_per_side grid of clicks (default 32, 1..256). */
export interface EverythingOptions {
  everything: true;
  points_per_side?: number;
}

export interface Instance {
  score: number;             // a clicked object's: its predicted IoU
  box: [number, number, number, number];
  area: number;
  mask: { size: [number, number]; counts: string };
}

/** Exactly one entry of the CLI's `prompts[]` (masks as COCO RLE). */
export interface PromptResult {
  text: string;
  boxes: [number, number, number, number, "pos" | "neg"][];
  instances: Instance[];
}

/** `sam3 segment --point/--box`'s entry: the object's prompt echoed, its object score
 * (sigmoid of the model's: low means nothing there) and its mask(s). */
export interface ObjectResult {
  points: [number, number, "pos" | "neg"][];
  box: [number, number, number, number] | null;
  object_score: number;
  instances: Instance[];
}

/** `sam3 segment --everything`'s entry. */
export interface EverythingResult {
  everything: true;
  instances: Instance[];
}

export interface Embedding {
  readonly model: Sam3Model;
  readonly width: number;
  readonly height: number;
  readonly timings_ms: { preprocess: number; encode_image: number };
  /** The image's id in answers: POST /v1/images' id for the same file where the tab can hash a
   * Blob's bytes (a secure context), else "local". */
  readonly image_id: string;
}

/** The whole answer, the document `sam3 segment --json` and POST /v1/segment write (sam3's
 * answer_json.h): the server's, with the image named by image_id. */
export interface Answer {
  model: { layout: string; name: string };
  images: Array<{ image_id: string; width: number; height: number;
                  prompts: Array<PromptResult | ObjectResult | EverythingResult> }>;
  timings_ms: { load: number; preprocess: number; encode_image: number; encode_text: number; decode: number;
                postprocess: number; image_cached: boolean };
}

/** answer()'s request: POST /v1/segment's body without the image. */
export interface AnswerRequest extends Omit<SegmentOptions, "text" | "boxes"> {
  prompts: Array<string | { text?: string; boxes?: BoxPrompt[] } | Omit<ClickOptions, "multimask"> | EverythingOptions>;
  multimask?: boolean;
  mask_format?: "rle";
}

export class Sam3Error extends Error {
  /** sam3's error code name: "invalid_argument", "model_not_found", "model_mismatch",
   * "tokenizer", "runtime", or "webgpu_unavailable", "out_of_memory". */
  readonly code: string;
}

export class Sam3Model {
  readonly device: "webgpu" | "wasm";
  /** The family's id in sam3's family registry (src/pure/families/table.cpp). */
  readonly layout: "efficientsam3" | "geti" | "usls" | "samexporter" | "sam3.1-ailia" | "sam3-tracker";
  /** What the core said of the model; `interactive`: it takes clicks and boxes, not text. */
  readonly info: { interactive: boolean; [key: string]: unknown };
  readonly generation: string;
  readonly quirks: string[];
  readonly inputWidth: number;
  readonly inputHeight: number;
  /** Why the model may run slower than it could (e.g. not cross-origin isolated). */
  readonly warnings: string[];
  /** Per network ("image", "text", "decoder", ...): what the rewrites did (empty when all are
   * off); cached: the rewritten graph came from Cache Storage. */
  readonly rewrites: Record<string, { fused: number; chunked: number; quantizers: number; matmuls: number; convs: number;
    skipped: number; linears: number; attention_steps: number; float_matmuls: number; segments: number; split_refused?: string; cached?: boolean }>;
  /** The int8 kernel the image encoder runs its linear layers in (null: ONNX Runtime Web's), and why. */
  readonly int8Kernel: { build: "relaxed" | "simd128" | null; reason: string };
  /** The attention kernel the decoders run their attention in (null: ONNX Runtime Web's), the
   * networks split for it, and why. */
  readonly attentionKernel: { build: "relaxed" | "simd128" | null; parts: string[]; reason: string };
  /** The float kernel the decoders run their large float products in (null: ONNX Runtime Web's),
   * the networks split for it, and why. */
  readonly floatKernel: { build: "relaxed" | "simd128" | null; parts: string[]; reason: string };
  /** Why this device: "asked for", "no WebGPU adapter in this browser", "a GPU adapter (...)",
   * or a software adapter passed over for WASM. */
  readonly deviceReason: string;
  /** The ONNX Runtime Web build the sessions run on (e.g. "ort.wasm.min.mjs"). */
  readonly ortBuild: string;
  /** The model folder's name (an answer's model.name); "" when the files came without one. */
  readonly name: string;
  /** Sam3.load()'s time in ms (an answer's timings_ms.load). */
  readonly loadMs: number;
  /** The last segment()'s times in ms: the text encoder's run (0 when its outputs were kept),
   * the other sessions' runs (geometry encoder, decoder), the core's work; and how many runs. */
  readonly lastTimings?: { encode_text: number; decode: number; postprocess: number; runs: number };
  /** What the next image encode should take: the last encode's time of this model (same files,
   * device, build, threads, rewrites) in this browser, kept in localStorage by every encode();
   * null before the first. A measurement, not a prediction from the graph. */
  readonly encodeEstimate: { ms: number; at: string; basis: string } | null;
  tokenize(text: string): { text: string; ids: number[]; mask: number[] };
  /** encode(), segment() and release() of one model run one at a time, in the order they were
   * called (Promise.all over several prompts queues them); a failed call does not stop the rest. */
  encode(image: ImageBitmap | ImageData | HTMLImageElement | Blob,
         options?: { onProgress?: (p: Progress) => void }): Promise<Embedding>;
  segment(embedding: Embedding, options: SegmentOptions): Promise<PromptResult>;
  /** The interactive model: a click decodes the embedding as it is (no encode). */
  segment(embedding: Embedding, options: ClickOptions): Promise<ObjectResult>;
  segment(embedding: Embedding, options: EverythingOptions): Promise<EverythingResult>;
  /** Every text prompt of one image, one entry per prompt, after the family's rule across them
   * (EfficientSAM3 drops an instance repeating a better one of another prompt): the CLI's and
   * the server's prompts[] for the same image and prompts. */
  segmentAll(embedding: Embedding, prompts: Array<string | { text?: string; boxes?: BoxPrompt[] }>,
             options?: Omit<SegmentOptions, "text" | "boxes">): Promise<PromptResult[]>;
  /** The whole answer to prompts on the embedding's image (masks as RLE): text prompts together
   * (the family's rule across them) on a text model, clicked objects one after another on the
   * interactive one. The page shows it as it comes. */
  answer(embedding: Embedding, request: AnswerRequest): Promise<Answer>;
  release(): Promise<void>;
}

export class Sam3 {
  /** source: a URL prefix of a model folder ("/models/"), or the folder's File objects. */
  static load(source: string | URL | Iterable<File>, options?: LoadOptions): Promise<Sam3Model>;
}

/** Deletes the model files this origin cached and their rewritten graphs. */
export function clearModelCache(): Promise<void>;
