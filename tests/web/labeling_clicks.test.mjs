// Clicks from the labeling tools, checked with their own decoder against the CLI: a Label
// Studio keypoint or rectangle (interactive mode, the request its editor sends) comes back as
// one brush region whose RLE, decoded by @thi.ng/rle-pack (the editor's decoder), is the mask
// `sam3 segment --point`/`--box` gives for the same click, pixel for pixel; X-AnyLabeling's
// point marks come back as the outline of that mask; the editor itself shows the clicked object.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { decode } from "@thi.ng/rle-pack";
import { startEditorPage, showPrediction } from "./label_studio_editor.mjs";
import { CLICK_SCENE, clickScenePng, cocoDecode, startServer, stopServer, launchBrowser } from "./support.mjs";

const { width: W, height: H } = CLICK_SCENE;
const TRACKER = path.join(process.env.SAM3_TEST_MODELS ?? "", "tracker");
const CONFIG = `<View>
  <Image name="image" value="$image" zoom="true"/>
  <BrushLabels name="tag" toName="image"><Label value="Car" background="#ff0000"/></BrushLabels>
  <KeyPointLabels name="tag2" toName="image" smart="true"><Label value="Car" smart="true" background="#000000" showInline="true"/></KeyPointLabels>
  <RectangleLabels name="tag3" toName="image" smart="true"><Label value="Car" background="#000000" showInline="true"/></RectangleLabels>
</View>`;

let server, baseUrl, dir, image;

before(async () => {
  ({ server, baseUrl } = await startServer(["--interactive-models", TRACKER, "--threads", "1"]));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "sam3-labeling-clicks-"));
  image = path.join(dir, "scene.png");
  fs.writeFileSync(image, clickScenePng());
});

after(async () => {
  await stopServer(server);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

// The object mask `sam3 segment` gives for these arguments, 0/1 row-major.
function cliMask(args) {
  const out = JSON.parse(execFileSync(process.env.SAM3_CLI, ["segment", "--threads", "1", "--models", TRACKER, "--image", image,
    ...args, "--json"], { encoding: "utf8" }));
  const inst = out.images[0].prompts[0].instances[0];
  return cocoDecode(inst.mask.counts, H, W);
}

// What Label Studio's editor sends for a smart keypoint or rectangle (percent of the image).
const keypoint = (x, y, isPositive) => ({
  original_width: W, original_height: H, image_rotation: 0,
  value: { x: x * 100 / W, y: y * 100 / H, width: 0.3125, keypointlabels: ["Car"] },
  is_positive: isPositive, id: `kp${x}_${y}`, from_name: "tag2", to_name: "image", type: "keypointlabels", origin: "manual",
});
const rectangle = ([x0, y0, x1, y1]) => ({
  original_width: W, original_height: H, image_rotation: 0,
  value: { x: x0 * 100 / W, y: y0 * 100 / H, width: (x1 - x0) * 100 / W, height: (y1 - y0) * 100 / H, rotation: 0,
    rectanglelabels: ["Car"] },
  is_positive: true, id: "rect1", from_name: "tag3", to_name: "image", type: "rectanglelabels", origin: "manual",
});

async function post(route, body) {
  const r = await fetch(baseUrl + route, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  assert.equal(r.status, 200, `${route}: ${r.status} ${await r.clone().text()}`);
  return r.json();
}

async function labelStudioPrediction(marks) {
  const task = { id: 7, data: { image: "data:image/png;base64," + clickScenePng().toString("base64") }, meta: {},
    created_at: "2026-12-02T03:00:00Z", updated_at: "2026-12-02T03:00:00Z", is_labeled: false, overlap: 1, inner_id: 1,
    total_annotations: 0, cancelled_annotations: 0, total_predictions: 0, annotations: [], predictions: [], project: 1 };
  const out = await post("/predict", { tasks: [task], model_version: "sam3", project: "1.1764644400", label_config: CONFIG,
    params: { login: null, password: null, context: { result: marks } } });
  assert.equal(out.results.length, 1);
  return out.results[0];
}

async function labelStudioBrush(marks) {
  const prediction = await labelStudioPrediction(marks);
  const brushes = prediction.result.filter((r) => r.type === "brushlabels");
  assert.equal(brushes.length, 1, "one brush region for the clicked object");
  assert.deepEqual(brushes[0].value.brushlabels, ["Car"]);
  assert.equal(brushes[0].from_name, "tag");
  assert.equal(prediction.result.length, 1, "no rectangle region: the rectangle control is the prompt");
  return brushes[0];
}

function assertSameMask(brush, want, what) {
  assert.equal(brush.original_width, W);
  assert.equal(brush.original_height, H);
  const rgba = decode(Uint8Array.from(brush.value.rle));
  assert.equal(rgba.length, W * H * 4, "the editor rejects an RLE of another length");
  let area = 0;
  for (let p = 0; p < W * H; p++) {
    const v = want[p] ? 255 : 0;
    area += want[p];
    for (let c = 0; c < 4; c++) {
      if (rgba[p * 4 + c] !== v) assert.fail(`${what}: pixel ${p % W},${Math.floor(p / W)} channel ${c} is ${rgba[p * 4 + c]}, not ${v}`);
    }
  }
  assert.ok(area > 1000, `${what}: the CLI's mask is an object (${area} px)`);
}

test("a Label Studio keypoint's brush is the mask of sam3 segment --point", async () => {
  const brush = await labelStudioBrush([keypoint(160, 168, true)]);
  assertSameMask(brush, cliMask(["--point", "160,168"]), "one click");
});

test("positive and negative keypoints: the mask of --point X,Y --point X,Y,neg", async () => {
  const brush = await labelStudioBrush([keypoint(160, 168, true), keypoint(105, 108, false)]);
  const want = cliMask(["--point", "160,168", "--point", "105,108,neg"]);
  assert.equal(want[110 * W + 110], 0, "the negative click cut the corner");
  assertSameMask(brush, want, "two clicks");
});

test("a Label Studio rectangle's brush is the mask of sam3 segment --box", async () => {
  const brush = await labelStudioBrush([rectangle([384, 96, 544, 240])]);
  assertSameMask(brush, cliMask(["--box", "384,96,544,240"]), "a box");
});

test("Label Studio's editor shows a keypoint's object as one Car brush of the --point mask's area", async () => {
  const prediction = await labelStudioPrediction([keypoint(160, 168, true)]);
  const browser = await launchBrowser();
  const editor = await startEditorPage(clickScenePng());
  try {
    const { serialized, regions, errors } = await showPrediction(browser, editor.url,
      { config: CONFIG, prediction, brushes: 1, screenshot: "sam3-label-studio-click.png" });
    assert.deepEqual(errors, [], "the editor raised no error");
    assert.deepEqual(regions, ["brushregion"]);
    const [brush] = serialized;
    assert.deepEqual(brush.value.brushlabels, ["Car"]);
    const want = cliMask(["--point", "160,168"]).reduce((a, v) => a + v, 0);
    const rgba = decode(Uint8Array.from(brush.value.rle));
    let area = 0;
    for (let i = 3; i < rgba.length; i += 4) area += rgba[i] > 0;
    // Redrawn through the editor's canvas: equal up to the antialiased edge.
    assert.ok(Math.abs(area - want) <= 0.03 * want, `${area} px in the editor, ${want} from sam3 segment --point`);
  } finally {
    await browser.close();
    editor.close();
  }
});

test("X-AnyLabeling point marks give the outline of the --point mask", async () => {
  const out = await post("/v1/predict", { model: "segment_anything_3_clicks",
    image: "data:image/png;base64," + clickScenePng().toString("base64"),
    params: { conf_threshold: 0.5, iou_threshold: 0, epsilon_factor: 0.001,
      marks: [{ type: "point", data: [160, 168], label: 1 }, { type: "point", data: [105, 108], label: 0 }] } });
  assert.equal(out.success, true, JSON.stringify(out));
  const polygons = out.data.shapes.filter((s) => s.shape_type === "polygon");
  assert.equal(polygons.length, 1);
  const want = cliMask(["--point", "160,168", "--point", "105,108,neg"]);
  // Rasterize the outline (pixel centres inside it) and compare with the CLI's mask.
  const pts = polygons[0].points;
  let both = 0, either = 0;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      let inside = false;
      for (let i = 0, j = pts.length - 1; i < pts.length; j = i++) {
        const [xi, yi] = pts[i], [xj, yj] = pts[j];
        if ((yi > y) !== (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi) inside = !inside;
      }
      both += inside && want[y * W + x] ? 1 : 0;
      either += inside || want[y * W + x] ? 1 : 0;
    }
  }
  assert.ok(both / either > 0.95, `outline IoU with the CLI's mask ${both / either}`);
});
