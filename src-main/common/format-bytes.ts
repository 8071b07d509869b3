/**
 * Sizes as a person reads them, the same in the host's messages and the renderer's file list:
 * binary units labelled as people know them (1 MB = 1,048,576 bytes), one decimal under 10.
 */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

/** "5,242,890 bytes". */
function exactBytes(n: number): string {
  return `${String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',')} bytes`;
}

/**
 * `size` and `limit` for a sentence that says one is more than the other. Rounded they may read
 * the same ("5.0 MB, more than the 5.0 MB"), which is no reason: then both in bytes, the limit
 * with its rounded size beside it ("5,242,890 bytes, more than the 5,242,880 bytes (5.0 MB)").
 */
export function formatBytesOver(size: number, limit: number): { size: string; limit: string } {
  const [a, b] = [formatBytes(size), formatBytes(limit)];
  // By value and unit: "10.0 MB" (9.96 MB rounded) reads the same as "10 MB".
  const [[na, ua], [nb, ub]] = [a.split(' '), b.split(' ')];
  const same = ua === ub && Number(na) === Number(nb);
  return same ? { size: exactBytes(size), limit: `${exactBytes(limit)} (${b})` } : { size: a, limit: b };
}
