// The model card's pipeline, as a reference for benchmarks: onnxruntime-node with default
// session options, and every request runs all three networks (no image-embedding reuse).
// The benchmark passes the decoded image (raw RGB) and the token ids, so only the pipeline
// structure and the runtime differ.
//
//   node reference.mjs MODEL_DIR RAW_RGB_FILE WIDTH HEIGHT TOKENS_JSON REQUESTS
// Prints one JSON object: {"load_ms", "requests": [{stage: ms}], "peak_rss_mb"}.
import fs from "node:fs";
import path from "node:path";
import ort from "onnxruntime-node";

const [modelDir, rawFile, widthArg, heightArg, tokensJson, requestsArg] = process.argv.slice(2);
const width = Number(widthArg), height = Number(heightArg);
const tokens = JSON.parse(tokensJson);  // [{ids: [32], mask: [32]}], cycled over requests
const requests = Number(requestsArg);
const rgb = fs.readFileSync(rawFile);
const now = () => performance.now();

// Plain bilinear stretch to size x size and (x/255 - 0.5) / 0.5, planar.
function preprocess(size) {
  const out = new Float32Array(3 * size * size);
  const sx = width / size, sy = height / size;
  for (let y = 0; y < size; y++) {
    const fy = Math.max(0, (y + 0.5) * sy - 0.5), y0 = Math.min(height - 1, Math.floor(fy)), y1 = Math.min(height - 1, y0 + 1), ly = fy - y0;
    for (let x = 0; x < size; x++) {
      const fx = Math.max(0, (x + 0.5) * sx - 0.5), x0 = Math.min(width - 1, Math.floor(fx)), x1 = Math.min(width - 1, x0 + 1), lx = fx - x0;
      for (let c = 0; c < 3; c++) {
        const p00 = rgb[(y0 * width + x0) * 3 + c], p01 = rgb[(y0 * width + x1) * 3 + c];
        const p10 = rgb[(y1 * width + x0) * 3 + c], p11 = rgb[(y1 * width + x1) * 3 + c];
        const v = (p00 * (1 - lx) + p01 * lx) * (1 - ly) + (p10 * (1 - lx) + p11 * lx) * ly;
        out[c * size * size + y * size + x] = v / 127.5 - 1;
      }
    }
  }
  return out;
}

// The card's postprocessing: the best query only, its mask upsampled to the image.
function postprocess(outputs) {
  const logits = outputs.pred_logits.data;
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  const [, , mh, mw] = outputs.pred_masks.dims;
  const m = outputs.pred_masks.data.subarray(best * mh * mw, (best + 1) * mh * mw);
  const mask = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(mh - 1, Math.floor((y + 0.5) * mh / height));
    for (let x = 0; x < width; x++) mask[y * width + x] = m[sy * mw + Math.min(mw - 1, Math.floor((x + 0.5) * mw / width))] > 0 ? 1 : 0;
  }
  return mask;
}

const t0 = now();
const vision = await ort.InferenceSession.create(path.join(modelDir, "vision-encoder.onnx"));
const text = await ort.InferenceSession.create(path.join(modelDir, "text-encoder.onnx"));
const decoder = await ort.InferenceSession.create(path.join(modelDir, "decoder.onnx"));
const loadMs = now() - t0;
const size = 1008;

const results = [];
for (let r = 0; r < requests; r++) {
  const times = {};
  let t = now();
  const pixels = preprocess(size);
  times.preprocess = now() - t;
  t = now();
  const v = await vision.run({ images: new ort.Tensor("float32", pixels, [1, 3, size, size]) });
  times.encode_image = now() - t;
  t = now();
  const tok = tokens[r % tokens.length];
  const tx = await text.run({
    input_ids: new ort.Tensor("int64", BigInt64Array.from(tok.ids.map(BigInt)), [1, 32]),
    attention_mask: new ort.Tensor("int64", BigInt64Array.from(tok.mask.map(BigInt)), [1, 32]),
  });
  times.encode_text = now() - t;
  t = now();
  const d = await decoder.run({
    fpn_feat_0: v.fpn_feat_0, fpn_feat_1: v.fpn_feat_1, fpn_feat_2: v.fpn_feat_2, fpn_pos_2: v.fpn_pos_2,
    text_features: tx.text_features, text_mask: tx.text_mask,
    input_boxes: new ort.Tensor("float32", Float32Array.from([0, 0, 1, 1]), [1, 1, 4]),
    input_boxes_labels: new ort.Tensor("int64", BigInt64Array.from([1n]), [1, 1]),
  });
  times.decode = now() - t;
  t = now();
  postprocess(d);
  times.postprocess = now() - t;
  results.push(times);
}
process.stdout.write(JSON.stringify({ load_ms: loadMs, requests: results, peak_rss_mb: process.resourceUsage().maxRSS / 1024 }) + "\n");
