// The interactive model as transformers.js's Sam3TrackerModel and Sam2Processor run it, as a
// reference for benchmarks: onnxruntime-node with default session options; the image is encoded
// once (get_image_embeddings), then each click is one decoder run whose three candidate masks
// are upsampled to 1008 x 1008 and then to the image (bilinear, post_process_masks), cut at 0,
// and the best predicted IoU taken. "Everything" is SAM's automatic mask generator done the
// same way: the grid in batches of 64, every candidate upsampled to the image, then the
// predicted-IoU, object-score and stability filters and box NMS.
//
//   node clicks_reference.mjs MODEL_DIR RAW_RGB_FILE WIDTH HEIGHT CLICKS_JSON POINTS_PER_SIDE
// Prints {"load_ms", "encode_ms", "clicks_ms": [...], "everything_ms", "everything_masks",
// "everything_decode_ms", "peak_rss_mb"}.
import fs from "node:fs";
import path from "node:path";
import ort from "onnxruntime-node";

const [modelDir, rawFile, widthArg, heightArg, clicksJson, sideArg] = process.argv.slice(2);
const width = Number(widthArg), height = Number(heightArg), side = Number(sideArg);
const clicks = JSON.parse(clicksJson);  // [[x, y], ...] in image pixels
const rgb = fs.readFileSync(rawFile);
const now = () => performance.now();
const S = 1008;

// Bilinear (half-pixel centres) resize of one float plane.
function resize(src, sw, sh, dw, dh) {
  const out = new Float32Array(dw * dh);
  const fx = sw / dw, fy = sh / dh;
  for (let y = 0; y < dh; y++) {
    const sy = Math.max(0, (y + 0.5) * fy - 0.5), y0 = Math.min(sh - 1, Math.floor(sy)), y1 = Math.min(sh - 1, y0 + 1), ly = sy - y0;
    for (let x = 0; x < dw; x++) {
      const sx = Math.max(0, (x + 0.5) * fx - 0.5), x0 = Math.min(sw - 1, Math.floor(sx)), x1 = Math.min(sw - 1, x0 + 1), lx = sx - x0;
      out[y * dw + x] = (src[y0 * sw + x0] * (1 - lx) + src[y0 * sw + x1] * lx) * (1 - ly) +
                        (src[y1 * sw + x0] * (1 - lx) + src[y1 * sw + x1] * lx) * ly;
    }
  }
  return out;
}

function pixelValues() {
  const planes = new Float32Array(3 * S * S);
  for (let c = 0; c < 3; c++) {
    const plane = new Float32Array(width * height);
    for (let i = 0; i < width * height; i++) plane[i] = rgb[i * 3 + c];
    const r = resize(plane, width, height, S, S);
    for (let i = 0; i < S * S; i++) planes[c * S * S + i] = r[i] / 127.5 - 1;
  }
  return planes;
}

// post_process_masks for one candidate: 288 -> 1008 -> the image's size, logits.
const upsample = (logits, mh, mw) => resize(resize(logits, mw, mh, S, S), S, S, width, height);

const t0 = now();
const vision = await ort.InferenceSession.create(path.join(modelDir, "onnx", "vision_encoder.onnx"));
const decoder = await ort.InferenceSession.create(path.join(modelDir, "onnx", "prompt_encoder_mask_decoder.onnx"));
const loadMs = now() - t0;

let t = now();
const embeddings = await vision.run({ pixel_values: new ort.Tensor("float32", pixelValues(), [1, 3, S, S]) });
const encodeMs = now() - t;

async function decode(points) {  // points: [[x, y]] in image pixels, one positive click each object
  const n = points.length;
  const xy = new Float32Array(n * 2), labels = new BigInt64Array(n).fill(1n);
  points.forEach(([x, y], i) => { xy[2 * i] = x * S / width; xy[2 * i + 1] = y * S / height; });
  return decoder.run({
    input_points: new ort.Tensor("float32", xy, [1, n, 1, 2]),
    input_labels: new ort.Tensor("int64", labels, [1, n, 1]),
    input_boxes: new ort.Tensor("float32", new Float32Array(0), [1, 0, 4]),
    "image_embeddings.0": embeddings["image_embeddings.0"], "image_embeddings.1": embeddings["image_embeddings.1"],
    "image_embeddings.2": embeddings["image_embeddings.2"],
  });
}

const clicksMs = [];
for (const p of clicks) {
  t = now();
  const out = await decode([p]);
  const [, , c, mh, mw] = out.pred_masks.dims;
  const iou = out.iou_scores.data;
  let best = 0;
  const masks = [];
  for (let k = 0; k < c; k++) {
    const up = upsample(out.pred_masks.data.subarray(k * mh * mw, (k + 1) * mh * mw), mh, mw);
    masks.push(Uint8Array.from(up, (v) => (v > 0 ? 1 : 0)));
    if (iou[k] > iou[best]) best = k;
  }
  clicksMs.push(now() - t);
}

// Everything: SAM's automatic mask generator with its defaults (0.88, 0.95 at offset 1, NMS 0.7).
t = now();
const grid = [];
for (let j = 0; j < side; j++) for (let i = 0; i < side; i++) grid.push([(i + 0.5) * width / side, (j + 0.5) * height / side]);
const kept = [];
let everythingDecodeMs = 0;
for (let start = 0; start < grid.length; start += 64) {
  const td = now();
  const out = await decode(grid.slice(start, start + 64));
  everythingDecodeMs += now() - td;
  const [, n, c, mh, mw] = out.pred_masks.dims;
  for (let o = 0; o < n; o++) {
    const objectScore = 1 / (1 + Math.exp(-out.object_score_logits.data[o]));
    for (let k = 0; k < c; k++) {
      const up = upsample(out.pred_masks.data.subarray((o * c + k) * mh * mw, (o * c + k + 1) * mh * mw), mh, mw);
      const iou = out.iou_scores.data[o * c + k];
      if (!(iou > 0.88) || !(objectScore > 0.5)) continue;
      let high = 0, low = 0, x0 = width, y0 = height, x1 = -1, y1 = -1;
      for (let p = 0; p < up.length; p++) {
        if (up[p] > 1) high++;
        if (up[p] > -1) low++;
        if (up[p] > 0) {
          const x = p % width, y = (p - x) / width;
          x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y);
        }
      }
      if (low === 0 || high / low < 0.95 || x1 < 0) continue;
      kept.push({ iou, box: [x0, y0, x1 + 1, y1 + 1], mask: Uint8Array.from(up, (v) => (v > 0 ? 1 : 0)) });
    }
  }
}
kept.sort((a, b) => b.iou - a.iou);
const boxIou = (a, b) => {
  const iw = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])), ih = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const inter = iw * ih, union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return union > 0 ? inter / union : 0;
};
const final = [];
for (const m of kept) if (final.every((f) => boxIou(f.box, m.box) <= 0.7)) final.push(m);
const everythingMs = now() - t;

process.stdout.write(JSON.stringify({ load_ms: loadMs, encode_ms: encodeMs, clicks_ms: clicksMs, everything_ms: everythingMs,
  everything_masks: final.length, everything_decode_ms: everythingDecodeMs, peak_rss_mb: process.resourceUsage().maxRSS / 1024 }) + "\n");
