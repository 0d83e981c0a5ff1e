// What the reference pipelines share: a scene drawn at the model's size (RGB, and a BMP for
// sam3), a bilinear resize of a float plane, the sigmoid.
export const sigmoid = (x) => 1 / (1 + Math.exp(-x));

// cv2.resize(INTER_LINEAR) and torch interpolate(bilinear, align_corners=False) of a float
// plane when enlarging: half-pixel centres, edges replicated.
export function resizeLinear(src, sh, sw, dh, dw) {
  const out = new Float32Array(dh * dw);
  const coord = (d, s, n) => {
    let x = (d + 0.5) * (s / n) - 0.5;
    if (x < 0) x = 0;
    const x0 = Math.min(Math.floor(x), s - 1), x1 = Math.min(x0 + 1, s - 1);
    return [x0, x1, x - x0];
  };
  for (let y = 0; y < dh; y++) {
    const [y0, y1, fy] = coord(y, sh, dh);
    for (let x = 0; x < dw; x++) {
      const [x0, x1, fx] = coord(x, sw, dw);
      const top = src[y0 * sw + x0] * (1 - fx) + src[y0 * sw + x1] * fx;
      const bottom = src[y1 * sw + x0] * (1 - fx) + src[y1 * sw + x1] * fx;
      out[y * dw + x] = top * (1 - fy) + bottom * fy;
    }
  }
  return out;
}

// A scene at the model's size: red and blue blocks on black, also written as a BMP for sam3.
export function scene(size) {
  const rgb = new Uint8Array(size * size * 3);
  const fill = (x0, y0, x1, y1, c) => {
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) rgb.set(c, (y * size + x) * 3);
  };
  fill(20, 16, 90, 80, [255, 0, 0]);
  fill(130, 120, 200, 200, [0, 0, 255]);
  fill(150, 20, 170, 40, [200, 30, 30]);
  const row = size * 3, pad = (4 - (row % 4)) % 4, data = Buffer.alloc((row + pad) * size);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const i = (y * size + x) * 3, o = (size - 1 - y) * (row + pad) + x * 3;
      data[o] = rgb[i + 2], data[o + 1] = rgb[i + 1], data[o + 2] = rgb[i];
    }
  }
  const header = Buffer.alloc(54);
  header.write("BM", 0);
  header.writeUInt32LE(54 + data.length, 2);
  header.writeUInt32LE(54, 10);
  header.writeUInt32LE(40, 14);
  header.writeInt32LE(size, 18);
  header.writeInt32LE(size, 22);
  header.writeUInt16LE(1, 26);
  header.writeUInt16LE(24, 28);
  header.writeUInt32LE(data.length, 34);
  return { rgb, bmp: Buffer.concat([header, data]) };
}


// sam3's instances of one prompt (its result document: boxes clamped to the image, masks as
// column-major COCO RLE) against a reference's ({score, box, mask: row-major 0/1}, best
// first): what differs, empty when nothing does.
export function differences(got, want, size, maskOf) {
  const problems = [];
  if (got.length !== want.length) problems.push(`${got.length} instances, the reference ${want.length}`);
  for (let k = 0; k < Math.min(got.length, want.length); k++) {
    const g = got[k], w = want[k];
    if (Math.abs(g.score - w.score) > 1e-4) problems.push(`instance ${k}: score ${g.score} against ${w.score}`);
    const clamped = w.box.map((v) => Math.min(Math.max(v, 0), size));
    if (g.box.some((v, i) => Math.abs(v - clamped[i]) > 1e-2)) problems.push(`instance ${k}: box ${g.box} against ${clamped}`);
    const m = maskOf(g.mask);
    let differ = 0;
    for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) differ += m[x * size + y] !== w.mask[y * size + x] ? 1 : 0;
    if (differ) problems.push(`instance ${k}: ${differ} mask pixels differ`);
  }
  return problems;
}
