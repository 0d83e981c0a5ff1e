// sam3 serve as Label Studio's ML backend, checked with Label Studio's own code: every brush
// RLE decoded by @thi.ng/rle-pack (the editor's decoder) equals the mask pixel for pixel, and
// a prediction loaded into the real editor (@heartexlabs/label-studio, in headless Chromium)
// shows brush and polygon regions of the right area: the editor re-rasterizes each brush from
// its canvas when it serializes, so the area read back is what a user sees.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { decode } from "@thi.ng/rle-pack";
import { startEditorPage, showPrediction } from "./label_studio_editor.mjs";
import { SCENE, scenePng, cocoDecode, startServer, stopServer, launchBrowser } from "./support.mjs";

const CONFIG = `<View>
  <Image name="image" value="$image"/>
  <BrushLabels name="brush" toName="image">
    <Label value="Car" predicted_values="red" background="#ff00ff"/>
    <Label value="Water" predicted_values="blue" background="#00ff00"/>
  </BrushLabels>
  <PolygonLabels name="outline" toName="image"><Label value="Car" predicted_values="red"/></PolygonLabels>
  <RectangleLabels name="box" toName="image"><Label value="Car" predicted_values="red"/></RectangleLabels>
</View>`;

let server, baseUrl, browser, editor;

before(async () => {
  ({ server, baseUrl } = await startServer());
  browser = await launchBrowser();
  editor = await startEditorPage(scenePng());
});

after(async () => {
  await browser?.close();
  editor?.close();
  await stopServer(server);
});

async function post(route, body) {
  const r = await fetch(baseUrl + route, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  assert.equal(r.status, 200, `${route}: ${r.status}`);
  return r.json();
}

const sceneUri = () => "data:image/png;base64," + scenePng().toString("base64");

async function predictScene() {
  const out = await post("/predict", {
    tasks: [{ id: 1, data: { image: sceneUri() } }], label_config: CONFIG, project: "1.1", params: { context: null },
  });
  assert.equal(out.results.length, 1);
  return out.results[0];
}

const alphaArea = (rgba) => { let n = 0; for (let i = 3; i < rgba.length; i += 4) n += rgba[i] > 0; return n; };
function polygonArea(points, w, h) {
  let a = 0;
  for (let i = 0; i < points.length; i++) {
    const [x1, y1] = points[i], [x2, y2] = points[(i + 1) % points.length];
    a += (x1 * w / 100) * (y2 * h / 100) - (x2 * w / 100) * (y1 * h / 100);
  }
  return Math.abs(a) / 2;
}

test("every brush RLE decodes with @thi.ng/rle-pack to the instance's mask, pixel for pixel", async () => {
  const prediction = await predictScene();
  const brushes = prediction.result.filter((r) => r.type === "brushlabels");
  assert.equal(brushes.length, 3, "two Car instances (red), one Water (blue)");
  const segment = await post("/v1/segment", { image: scenePng().toString("base64"), prompts: ["red", "blue"] });
  const instances = segment.images[0].prompts.flatMap((p) => p.instances);
  assert.equal(instances.length, brushes.length);
  brushes.forEach((brush, n) => {
    assert.equal(brush.original_width, SCENE.width);
    assert.equal(brush.original_height, SCENE.height);
    const rgba = decode(Uint8Array.from(brush.value.rle));
    assert.equal(rgba.length, SCENE.width * SCENE.height * 4, "the editor rejects an RLE of another length");
    const mask = cocoDecode(instances[n].mask.counts, SCENE.height, SCENE.width);
    for (let p = 0; p < mask.length; p++) {
      const want = mask[p] ? 255 : 0;
      for (let c = 0; c < 4; c++) {
        if (rgba[p * 4 + c] !== want) assert.fail(`brush ${n}: pixel ${p % SCENE.width},${Math.floor(p / SCENE.width)} channel ${c} is ${rgba[p * 4 + c]}, not ${want}`);
      }
    }
    assert.equal(brush.value.brushlabels[0], n < 2 ? "Car" : "Water");
  });
});

test("the Label Studio editor shows the brush, polygon and rectangle regions at their area", async () => {
  const prediction = await predictScene();
  const expected = {
    brush: prediction.result.filter((r) => r.type === "brushlabels").map((r) => alphaArea(decode(Uint8Array.from(r.value.rle)))),
    polygon: prediction.result.filter((r) => r.type === "polygonlabels").map((r) => polygonArea(r.value.points, SCENE.width, SCENE.height)),
  };
  const { serialized, regions, errors } = await showPrediction(browser, editor.url,
    { config: CONFIG, prediction, brushes: 3, screenshot: "sam3-label-studio-editor.png" });
  assert.deepEqual(errors, [], "the editor raised no error");
  assert.equal(regions.filter((t) => t === "brushregion").length, 3, `regions: ${regions}`);
  assert.equal(regions.filter((t) => t === "polygonregion").length, 2, `regions: ${regions}`);
  assert.equal(regions.filter((t) => t === "rectangleregion").length, 2, `regions: ${regions}`);

  const brushes = serialized.filter((r) => r.type === "brushlabels");
  brushes.forEach((b, n) => {
    assert.equal(b.original_width, SCENE.width);
    const area = alphaArea(decode(Uint8Array.from(b.value.rle)));
    // Redrawn through the editor's canvas: equal up to the antialiased edge.
    assert.ok(Math.abs(area - expected.brush[n]) <= 0.03 * expected.brush[n], `brush ${n}: ${area} px in the editor, ${expected.brush[n]} sent`);
  });
  const polygons = serialized.filter((r) => r.type === "polygonlabels");
  polygons.forEach((p, n) => {
    const area = polygonArea(p.value.points, SCENE.width, SCENE.height);
    assert.ok(Math.abs(area - expected.polygon[n]) <= 0.01 * expected.polygon[n], `polygon ${n}: ${area} in the editor, ${expected.polygon[n]} sent`);
  });
  const bigRed = (SCENE.redBig[2] - SCENE.redBig[0]) * (SCENE.redBig[3] - SCENE.redBig[1]);
  assert.ok(Math.abs(expected.brush[0] - bigRed) < 0.1 * bigRed, `the best Car brush covers the big red box: ${expected.brush[0]} vs ${bigRed}`);
});
