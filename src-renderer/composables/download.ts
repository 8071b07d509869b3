/**
 * Hands bytes made in the page to the browser's own download (Electron's, in the desktop app)
 * under `name`. For files the page builds itself (a screenshot, the terminal's text); remote
 * files never come this way (sftp.downloadLink, sftp.saveAs stream them).
 */
export function downloadBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  // The download has taken the bytes long before this.
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}
