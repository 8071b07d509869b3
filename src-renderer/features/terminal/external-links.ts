/**
 * Opens a link from terminal output outside the app. Only http(s) leaves; in Electron the main
 * process's window-open handler applies its allowlist and hands the URL to the OS browser.
 */
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
