// ailia-models' SAM 3.1 image pipeline (image_segmentation/segment-anything-3.1/
// segment_anything_3_1.py: preprocess, run_grounding, postprocess), done again in Node.js on
// onnxruntime-node from reading the driver (no code of it copied), run on a model folder and
// compared with `sam3 segment --json` on the same files and image:
//
//   node tools/reference/sam31_ailia_reference.mjs SAM3_CLI MODEL_DIR
//
// The image is drawn at the model's input size, so neither pipeline resamples it (PIL's resize
// is not redone here); the text ids are sam3's own (`sam3 tokenize`, checked against CLIP's
// elsewhere). Exits 1 when an instance's score, box or mask differs.
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

// float32 -> float16 (round to nearest even) -> float32, as numpy's astype(float16).
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
function toHalf(x) {
  f32[0] = x;
  const b = u32[0], sign = (b >>> 16) & 0x8000;
  const e = ((b >>> 23) & 0xff) - 127 + 15;
  let m = b & 0x7fffff;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    m |= 0x800000;
    const shift = 14 - e, rem = m & ((1 << shift) - 1), halfway = 1 << (shift - 1);
    let h = m >>> shift;
    if (rem > halfway || (rem === halfway && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (m >>> 13);
  const rem = m & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;
  return sign | h;
}
function fromHalf(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
const half = (x) => fromHalf(toHalf(Math.fround(x)));

const encoder = await ort.InferenceSession.create(path.join(dir, "sam3.1_image_encoder.onnx"));
const grounding = await ort.InferenceSession.create(path.join(dir, "sam3.1_grounding.onnx"));
const size = encoder.inputMetadata?.[0]?.shape?.[2] ?? 224;
const { rgb, bmp } = scene(size);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sam31-reference-"));
let failures = 0;
try {
  const imagePath = path.join(tmp, "scene.bmp");
  fs.writeFileSync(imagePath, bmp);
  // preprocess: x/255 stored as float16, (x - 0.5)/0.5 in float16, then float32; [1,3,H,W].
  const planes = new Float32Array(3 * size * size);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < size * size; i++) planes[c * size * size + i] = half((half(rgb[i * 3 + c] / 255) - half(0.5)) / half(0.5));
  }
  const enc = await encoder.run({ image: new ort.Tensor("float32", planes, [1, 3, size, size]) });
  for (const text of ["red", "blue", "purple"]) {
    const ids = JSON.parse(execFileSync(cli, ["tokenize", text], { encoding: "utf8" })).ids;
    const out = await grounding.run({
      fpn0: enc.fpn0, fpn1: enc.fpn1, fpn2: enc.fpn2, pos2: enc.pos2,
      text_tokens: new ort.Tensor("int64", BigInt64Array.from(ids.map(BigInt)), [1, 32]),
      box_coords: new ort.Tensor("float32", new Float32Array(0), [0, 1, 4]),
      box_labels: new ort.Tensor("int64", new BigInt64Array(0), [0, 1]),
      box_mask: new ort.Tensor("bool", new Uint8Array(0), [1, 0]),
    });
    // postprocess: sigmoid(logit) x sigmoid(presence) > 0.5; cx,cy,w,h -> x0,y0,x1,y1 x (W,H);
    // the logits resized to the image, sigmoid > 0.5.
    const [, q, mh, mw] = out.pred_masks.dims;
    const presence = sigmoid(out.presence_logit_dec.data[0]);
    const want = [];
    for (let k = 0; k < q; k++) {
      const score = sigmoid(out.pred_logits.data[k]) * presence;
      if (!(score > 0.5)) continue;
      const [cx, cy, w, h] = out.pred_boxes.data.slice(k * 4, k * 4 + 4);
      const box = [(cx - w / 2) * size, (cy - h / 2) * size, (cx + w / 2) * size, (cy + h / 2) * size];
      const logits = resizeLinear(out.pred_masks.data.subarray(k * mh * mw, (k + 1) * mh * mw), mh, mw, size, size);
      want.push({ score, box, mask: Uint8Array.from(logits, (v) => (sigmoid(v) > 0.5 ? 1 : 0)) });
    }
    want.sort((a, b) => b.score - a.score);
    const doc = JSON.parse(execFileSync(cli, ["segment", "--models", dir, "--image", imagePath, "--prompt", text, "--json"],
      { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
    const got = (doc.images?.[0] ?? doc).prompts[0].instances;
    const problems = differences(got, want, size, maskOf);
    console.log(`${text}: sam3 ${got.length} instance(s), the driver's pipeline ${want.length}: ${problems.length ? problems.join("; ") : "equal"}`);
    failures += problems.length;
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
process.exit(failures ? 1 : 0);
