// sam3's interactive (click) results against transformers.js, the peer: its Sam3TrackerModel and
// Sam2 processor (post_process_masks) run the same generated sam3-tracker files
// (tools/make_tracker_model.py) on onnxruntime-node, and every case must give the same
// candidate, score, object score, mask and box as `sam3 segment --point/--box`.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";

import { AutoProcessor, env, RawImage, Sam3TrackerModel } from "@huggingface/transformers";
import sharp from "sharp";

const CLI = process.env.SAM3_CLI;
const MODELS = process.env.SAM3_TEST_MODELS;

// The C++ tests' click scene (tests/support/test_images.h make_click_scene): 640x480, black,
// two red squares and a blue bar.
const W = 640, H = 480;
const RECTS = [[[100, 100, 220, 220], [255, 0, 0]], [[400, 100, 520, 220], [255, 0, 0]], [[200, 300, 500, 420], [0, 0, 255]]];

let dir, scene, model, processor, image;

before(async () => {
  assert.ok(CLI && MODELS, "SAM3_CLI and SAM3_TEST_MODELS must be set");
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "sam3-peer-"));
  const px = Buffer.alloc(W * H * 3);
  for (const [[x0, y0, x1, y1], rgb] of RECTS) {
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) px.set(rgb, (y * W + x) * 3);
  }
  scene = path.join(dir, "scene.png");
  await sharp(px, { raw: { width: W, height: H, channels: 3 } }).png().toFile(scene);
  env.allowRemoteModels = false;
  env.localModelPath = MODELS;
  model = await Sam3TrackerModel.from_pretrained("tracker", { dtype: "fp32" });
  processor = await AutoProcessor.from_pretrained("tracker");
  image = await RawImage.read(scene);
});

after(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

// What transformers.js gives for one call: per object, candidates (best predicted IoU first,
// or the best only) with their mask (row-major 0/1) and score, and the object score.
async function peer({ points = null, labels = null, boxes = null }, multimask) {
  const inputs = await processor(image, {
    ...(points && { input_points: [[points]], input_labels: [[labels]] }),
    ...(boxes && { input_boxes: [boxes] }),
  });
  const out = await model(inputs);
  const [masks] = await processor.post_process_masks(out.pred_masks, inputs.original_sizes, inputs.reshaped_input_sizes);
  const [, objects, candidates] = out.iou_scores.dims;
  const plane = W * H;
  const result = [];
  for (let o = 0; o < objects; o++) {
    const iou = Array.from(out.iou_scores.data.slice(o * candidates, (o + 1) * candidates));
    let order = iou.map((_, c) => c).sort((a, b) => iou[b] - iou[a] || a - b);
    if (!multimask) order = order.slice(0, 1);
    result.push({
      objectScore: 1 / (1 + Math.exp(-out.object_score_logits.data[o])),
      masks: order.map((c) => ({
        score: iou[c],
        mask: masks.data.slice((o * candidates + c) * plane, (o * candidates + c + 1) * plane),
      })),
    });
  }
  return result;
}

// What sam3 gives for the same call, through the CLI (JSON on stdout, PNG masks in --out).
async function sam3(args, objects) {
  const out = path.join(dir, `out-${Math.random().toString(36).slice(2)}`);
  const doc = JSON.parse(execFileSync(CLI, ["segment", "--models", path.join(MODELS, "tracker"), "--image", scene,
    "--json", "--out", out, "--threads", "1", ...args], { encoding: "utf8" }));
  const prompts = doc.images[0].prompts;
  assert.equal(prompts.length, objects);
  const result = [];
  for (let o = 0; o < objects; o++) {
    const masks = [];
    for (let k = 0; k < prompts[o].instances.length; k++) {
      const png = path.join(out, "scene", `object-${o + 1}`, `instance_${String(k).padStart(3, "0")}.png`);
      const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
      const mask = new Uint8Array(W * H);
      for (let i = 0; i < W * H; i++) mask[i] = data[i * info.channels] > 0 ? 1 : 0;
      masks.push({ score: prompts[o].instances[k].score, box: prompts[o].instances[k].box, mask });
    }
    result.push({ objectScore: prompts[o].object_score, masks, prompt: prompts[o] });
  }
  return result;
}

function bounds(mask) {
  let x0 = W, y0 = H, x1 = -1, y1 = -1;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      if (mask[y * W + x]) x0 = Math.min(x0, x), y0 = Math.min(y0, y), x1 = Math.max(x1, x + 1), y1 = Math.max(y1, y + 1);
    }
  }
  return [x0, y0, x1, y1];
}

// Checks every object and mask; returns the smallest mask IoU and largest box difference seen.
function compare(name, ours, theirs) {
  let worstIou = 1, worstBox = 0;
  assert.equal(ours.length, theirs.length, `${name}: objects`);
  ours.forEach((object, o) => {
    const peerObject = theirs[o];
    assert.ok(Math.abs(object.objectScore - peerObject.objectScore) < 1e-3,
      `${name} object ${o + 1}: object score ${object.objectScore} vs transformers.js ${peerObject.objectScore}`);
    assert.equal(object.masks.length, peerObject.masks.length, `${name} object ${o + 1}: candidates`);
    object.masks.forEach((m, k) => {
      const p = peerObject.masks[k];
      assert.ok(Math.abs(m.score - p.score) < 1e-4, `${name} object ${o + 1} mask ${k + 1}: score ${m.score} vs ${p.score}`);
      let inter = 0, union = 0;
      for (let i = 0; i < W * H; i++) inter += m.mask[i] & p.mask[i], union += m.mask[i] | p.mask[i];
      assert.ok(union > 0, `${name}: an empty mask`);
      // The images are resized by different code (sam3's resampler, sharp): pixels on an
      // object's edge may differ, nothing else.
      assert.ok(inter / union > 0.99, `${name} object ${o + 1} mask ${k + 1}: IoU with transformers.js ${inter / union}`);
      worstIou = Math.min(worstIou, inter / union);
      const ob = bounds(m.mask), pb = bounds(p.mask);
      for (let c = 0; c < 4; c++) {
        worstBox = Math.max(worstBox, Math.abs(m.box[c] - pb[c]));
        assert.ok(Math.abs(m.box[c] - pb[c]) <= 2, `${name} object ${o + 1}: box ${m.box} vs transformers.js's mask bounds ${pb}`);
        assert.ok(Math.abs(ob[c] - m.box[c]) <= 1, `${name} object ${o + 1}: box ${m.box} vs its own mask ${ob}`);
      }
    });
  });
  return `mask IoU with transformers.js >= ${worstIou.toFixed(4)}, boxes within ${worstBox} px`;
}

const CASES = [
  ["one click", ["--point", "160,160"], { points: [[160, 160]], labels: [1] }],
  ["a negative click", ["--point", "160,160", "--point", "105,105,neg"], { points: [[160, 160], [105, 105]], labels: [1, 0] }],
  ["two positive clicks", ["--point", "160,160", "--point", "460,160"], { points: [[160, 160], [460, 160]], labels: [1, 1] }],
  ["the blue bar (not square in the model's space)", ["--point", "350,360"], { points: [[350, 360]], labels: [1] }],
  ["the background", ["--point", "20,20"], { points: [[20, 20]], labels: [1] }],
  ["a box alone", ["--box", "380,80,540,240"], { boxes: [[380, 80, 540, 240]] }],
  ["two boxes alone (one decoder run)", ["--box", "380,80,540,240", "--box", "90,90,230,230"],
    { boxes: [[380, 80, 540, 240], [90, 90, 230, 230]] }],
  ["a box and a click", ["--point", "160,160", "--box", "90,90,230,230"], { points: [[160, 160]], labels: [1], boxes: [[90, 90, 230, 230]] }],
];

for (const [name, args, prompt] of CASES) {
  test(`sam3 agrees with transformers.js: ${name}`, async (t) => {
    const objects = prompt.boxes && !prompt.points ? prompt.boxes.length : 1;
    t.diagnostic(compare(name, await sam3(args, objects), await peer(prompt, false)));
  });
}

test("sam3 agrees with transformers.js: multimask (all three candidates, best first)", async (t) => {
  t.diagnostic(compare("multimask", await sam3(["--point", "160,160", "--multimask"], 1),
    await peer({ points: [[160, 160]], labels: [1] }, true)));
});

test("the object's points and box are echoed in its prompts[] entry", async () => {
  const [object] = await sam3(["--point", "160,160", "--point", "105,105,neg", "--box", "90,90,230,230"], 1);
  assert.deepEqual(object.prompt.points, [[160, 160, "pos"], [105, 105, "neg"]]);
  assert.deepEqual(object.prompt.box, [90, 90, 230, 230]);
});
