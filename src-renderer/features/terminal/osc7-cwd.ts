/** Longer than any folder a tab would show; a report beyond it is not a folder. */
const MAX_PATH = 4096;

/**
 * The folder in an OSC 7 report ("file://host/path", percent-encoded), which shells set up for it
 * (fish, zsh and bash with vte.sh, many distributions' defaults) print at every prompt; null for
 * anything else. It comes from the program in the terminal, so control characters are made spaces
 * before a tab shows it.
 */
export function cwdFromOsc7(report: string): string | null {
  const m = /^file:\/\/[^/]*(\/.*)$/s.exec(report);
  const raw = m?.[1];
  if (!raw || raw.length > MAX_PATH) return null;
  let path = raw;
  try {
    path = decodeURIComponent(raw);
  } catch {
    // Not valid percent-encoding: the path as written.
  }
  return path.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}
