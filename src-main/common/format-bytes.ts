/**
 * Sizes as a person reads them, the same in the host's messages and the renderer's file list:
 * binary units labelled as people know them (1 MB = 1,048,576 bytes), one decimal under 10, two
 * under 1. Never four digits before the point: from 1000 of a unit on it is the next unit ("0.98
 * GB", not "1000 MB"), as four digits do not fit the file list's Size column.
 */
export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let v = n;
  let u = 0;
  // By the figure shown: 999.6 KB would round to "1000 KB".
  while (Math.round(v) >= 1000 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  if (u === 0) return `${n} B`;
  // Under 1 only between 1000 and 1023 of the unit below (0.98 to 1.0): "1.00" reads as "1.0".
  const figure = v < 0.995 ? v.toFixed(2) : v < 10 ? v.toFixed(1) : String(Math.round(v));
  return `${figure} ${units[u]}`;
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
