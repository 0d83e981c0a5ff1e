// COCO's compressed RLE strings (pycocotools' rleToString) decoded for comparing masks in the
// browser tests: column-major runs, starting with zeros.
export function decodeCounts(s) {
  const counts = [];
  for (let p = 0; p < s.length;) {
    let x = 0, k = 0, more = true;
    while (more) {
      const c = s.charCodeAt(p) - 48;
      x |= (c & 0x1f) << (5 * k);
      more = (c & 0x20) !== 0;
      p++;
      k++;
      if (!more && (c & 0x10)) x |= -1 << (5 * k);
    }
    if (counts.length > 2) x += counts[counts.length - 2];
    counts.push(x);
  }
  return counts;
}

export function maskOf({ size: [h, w], counts }) {
  const m = new Uint8Array(h * w);
  let at = 0, value = 0;
  for (const n of decodeCounts(counts)) {
    if (value) m.fill(1, at, at + n);
    at += n;
    value ^= 1;
  }
  return m;
}

export function maskIou(a, b) {
  const ma = maskOf(a), mb = maskOf(b);
  let inter = 0, union = 0;
  for (let i = 0; i < ma.length; i++) {
    inter += ma[i] & mb[i];
    union += ma[i] | mb[i];
  }
  return union === 0 ? 1 : inter / union;
}
