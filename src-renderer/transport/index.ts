import { openElectronWire } from './electron-wire.js';
import { HostLink, WEBSOCKET_HEARTBEAT } from './host-link.js';
import { openWebSocketWire, websocketUrl } from './websocket-wire.js';

export { HostLink } from './host-link.js';
export type { LinkState, LinkStatus } from './host-link.js';
export { wireFrameCounts } from './websocket-wire.js';

/** Electron when the preload is there, else the WebSocket of the host that served the page. */
export function createHostLink(): HostLink {
  const preload = window.wraith;
  if (preload?.electron) return new HostLink('electron', () => openElectronWire(preload));
  return new HostLink('websocket', () => openWebSocketWire(websocketUrl(window.location)), WEBSOCKET_HEARTBEAT);
}

let appLink: HostLink | null = null;

/** Installed once by main.ts; stores reach it here (they run outside component setup too). */
export function setHostLink(link: HostLink): void {
  appLink = link;
}

export function useHost(): HostLink {
  const link = appLink;
  if (!link) throw new Error('useHost() before the host link was installed (main.ts)');
  return link;
}
