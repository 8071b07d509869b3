/**
 * Links in terminal output: which text is a web link, when a click opens it, and the opening
 * itself. Only http(s) leaves; in Electron the main process's window-open handler applies its
 * allowlist and hands the URL to the OS browser.
 */

/**
 * A web address in output. As the web-links addon's own pattern, but a pair of parentheses may
 * be part of it (`https://en.wikipedia.org/wiki/Bash_(Unix_shell)`), one level deep; a closing
 * one without its opening one is not (`(see https://example.com/a)` ends before it). Parentheses
 * stay out of the "characters" class so a group is taken whole or not at all.
 */
export const WEB_LINK_PATTERN =
  /(https?|HTTPS?):[/]{2}(?:[^\s"'!*(){}|\\^<>`]|\([^\s"'(){}|\\^<>`]*\))*(?:[^\s"':,.!?{}|\\^~[\]`()<>]|\([^\s"'(){}|\\^<>`]*\))/;

/**
 * A click opens a link only with Ctrl (Cmd on a Mac) held, as in most terminals: a plain click
 * in a terminal is for focus and selection, and an OSC 8 link's text need not be its address.
 */
export function clickOpensLink(ev: Pick<MouseEvent, 'ctrlKey' | 'metaKey'>): boolean {
  return ev.ctrlKey || ev.metaKey;
}

/** "Ctrl+click" or, on a Mac, "⌘+click": what the hover tip tells a person to do. */
export function openLinkGesture(platform = navigator.platform): string {
  return /^Mac/i.test(platform) ? '⌘+click' : 'Ctrl+click';
}

export function openExternal(uri: string): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  window.open(url.href, '_blank', 'noopener,noreferrer');
  return true;
}
