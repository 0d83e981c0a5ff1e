// The PyTorch EfficientSAM3's image pipeline (open-edge-platform/geti-instant-learn: the SAM3
// pre- and post-processors it reuses, PostProcessingConfig(mask_iom_threshold=0.3) within a
// prompt, default_postprocessor's MaskIoMNMS(0.5) then BoxIoMNMS(0.5) over the image), done
// again in Node.js on onnxruntime-node from reading that code (none of it copied), run on
// Intel's ONNX files of it and compared with `sam3 segment --json --threshold 0.4` (the
// reference's confidence threshold) on the same files and image:
//
//   node tools/reference/efficientsam3_reference.mjs SAM3_CLI MODEL_DIR
//
// The image is drawn at the model's input size (no resampling in either pipeline); ids are
// sam3's (`sam3 tokenize`). Exits 1 when an instance's score, box or mask differs.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { maskOf } from "../../tests/web/coco_rle.mjs";
import { differences, resizeLinear, scene, sigmoid } from "./reference_common.mjs";

const require = createRequire(path.join(path.dirname(new URL(import.meta.url).pathname), "../../tests/web/package.json"));
const ort = require("onnxruntime-node");
const [cli, dir] = process.argv.slice(2);
const graphs = fs.existsSync(path.join(dir, "onnx", "prompt-decoder.onnx")) ? path.join(dir, "onnx") : dir;
const open = (name) => ort.InferenceSession.create(path.join(graphs, `${name}.onnx`));
const [vision, textEncoder, geometry, decoder] = await Promise.all(
  ["vision-encoder", "text-encoder", "geometry-encoder", "prompt-decoder"].map(open));
const THRESHOLD = 0.4, WITHIN_MASK_IOM = 0.3, ACROSS_MASK_IOM = 0.5, ACROSS_BOX_IOM = 0.5;
const PROMPTS = ["red", "blue", "red", "purple"];

// [a, b] along axis 1 of [1, L, D] (or [1, L]) tensors.
function concat(a, b) {
  const data = new a.data.constructor(a.data.length + b.data.length);
  data.set(a.data);
  data.set(b.data, a.data.length);
  const dims = [...a.dims];
  dims[1] += b.dims[1];
  return new ort.Tensor(a.type, data, dims);
}

// Greedy NMS by score on an overlap (intersection over the smaller): kept indices.
function greedy(items, overlap, threshold) {
  const order = items.map((_, i) => i).sort((a, b) => items[b].score - items[a].score);
  const kept = [], dropped = new Set();
  for (let i = 0; i < order.length; i++) {
    if (dropped.has(order[i])) continue;
    kept.push(order[i]);
    for (let j = i + 1; j < order.length; j++) {
      if (!dropped.has(order[j]) && overlap(items[order[i]], items[order[j]]) > threshold) dropped.add(order[j]);
    }
  }
  return kept.sort((a, b) => a - b).map((i) => items[i]);
}
function maskIom(a, b) {
  let inter = 0, areaA = 0, areaB = 0;
  for (let i = 0; i < a.mask.length; i++) inter += a.mask[i] & b.mask[i], areaA += a.mask[i], areaB += b.mask[i];
  return inter / (Math.min(areaA, areaB) + 1e-6);
}
function boxOfMask(m, size) {  // masks_to_boxes: the first and last pixels' indices
  let x0 = size, y0 = size, x1 = -1, y1 = -1;
  for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) {
    if (m[y * size + x]) x0 = Math.min(x0, x), x1 = Math.max(x1, x), y0 = Math.min(y0, y), y1 = Math.max(y1, y);
  }
  return [x0, y0, x1, y1];
}
function boxIom(a, b, size) {
  const p = boxOfMask(a.mask, size), q = boxOfMask(b.mask, size);
  const area = (r) => Math.max(0, r[2] - r[0]) * Math.max(0, r[3] - r[1]);
  const inter = area([Math.max(p[0], q[0]), Math.max(p[1], q[1]), Math.min(p[2], q[2]), Math.min(p[3], q[3])]);
  return inter / (Math.min(area(p), area(q)) + 1e-6);
}

const size = vision.inputMetadata?.[0]?.shape?.[2] ?? 224;
const { rgb, bmp } = scene(size);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "efficientsam3-reference-"));
let failures = 0;
try {
  const imagePath = path.join(tmp, "scene.bmp");
  fs.writeFileSync(imagePath, bmp);
  // Sam3Preprocessor: (resized, rounded, clamped) / 255, then (x - 0.5) / 0.5.
  const planes = new Float32Array(3 * size * size);
  for (let c = 0; c < 3; c++) for (let i = 0; i < size * size; i++) planes[c * size * size + i] = (rgb[i * 3 + c] / 255 - 0.5) / 0.5;
  const image = await vision.run({ pixel_values: new ort.Tensor("float32", planes, [1, 3, size, size]) });
  const perPrompt = [];
  for (const text of PROMPTS) {
    const { ids, mask } = JSON.parse(execFileSync(cli, ["tokenize", text], { encoding: "utf8" }));  // pad 0; HF's mask
    const t = await textEncoder.run({
      input_ids: new ort.Tensor("int64", BigInt64Array.from(ids.map(BigInt)), [1, 32]),
      attention_mask: new ort.Tensor("int64", BigInt64Array.from(mask.map(BigInt)), [1, 32]),
    });
    // No box and no point: one of each labelled -10 (ignored).
    const g = await geometry.run({
      fpn_feat_2: image.fpn_feat_2, fpn_pos_2: image.fpn_pos_2,
      input_boxes: new ort.Tensor("float32", new Float32Array(4), [1, 1, 4]),
      input_boxes_labels: new ort.Tensor("int64", BigInt64Array.from([-10n]), [1, 1]),
      input_points: new ort.Tensor("float32", new Float32Array(2), [1, 1, 2]),
      input_points_labels: new ort.Tensor("int64", BigInt64Array.from([-10n]), [1, 1]),
    });
    const out = await decoder.run({
      fpn_feat_0: image.fpn_feat_0, fpn_feat_1: image.fpn_feat_1, fpn_feat_2: image.fpn_feat_2, fpn_pos_2: image.fpn_pos_2,
      prompt_features: concat(t.text_features, g.geometry_features), prompt_mask: concat(t.text_mask, g.geometry_mask),
      text_features: t.text_features, text_mask: t.text_mask,
    });
    // Sam3Postprocessor without a presence factor: sigmoid(logit) > threshold; boxes x (W,H);
    // sigmoid of the mask logits resized bilinearly, > 0.5.
    const [, q, mh, mw] = out.pred_masks.dims;
    const found = [];
    for (let k = 0; k < q; k++) {
      const score = sigmoid(out.pred_logits.data[k]);
      if (!(score > THRESHOLD)) continue;
      const box = Array.from(out.pred_boxes.data.slice(k * 4, k * 4 + 4), (v, i) => v * size);
      const probabilities = Float32Array.from(out.pred_masks.data.subarray(k * mh * mw, (k + 1) * mh * mw), sigmoid);
      found.push({ score, box, mask: Uint8Array.from(resizeLinear(probabilities, mh, mw, size, size), (v) => (v > 0.5 ? 1 : 0)) });
    }
    perPrompt.push(greedy(found, maskIom, WITHIN_MASK_IOM));
  }
  // Over the image: mask IoM, then box IoM on what is left.
  let all = perPrompt.flatMap((list, p) => list.map((inst) => ({ ...inst, prompt: p })));
  all = greedy(all, maskIom, ACROSS_MASK_IOM);
  all = greedy(all, (a, b) => boxIom(a, b, size), ACROSS_BOX_IOM);
  const args = ["segment", "--models", dir, "--image", imagePath, "--threshold", String(THRESHOLD), "--json"];
  for (const text of PROMPTS) args.push("--prompt", text);
  const doc = JSON.parse(execFileSync(cli, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
  const results = (doc.images?.[0] ?? doc).prompts;
  PROMPTS.forEach((text, p) => {
    const want = all.filter((i) => i.prompt === p).sort((a, b) => b.score - a.score);
    const got = results[p].instances;
    const problems = differences(got, want, size, maskOf);
    console.log(`prompt ${p} "${text}": sam3 ${got.length} instance(s), the reference ${want.length}: ${problems.length ? problems.join("; ") : "equal"}`);
    failures += problems.length;
  });
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
process.exit(failures ? 1 : 0);
