import { randomUUID } from 'node:crypto';
import type { SessionInfo, SessionOpener } from '../../common/contract/sessions.js';
import type { OneTimeCredential } from '../../common/contract/ssh.js';
import { type ErrorCode, WraithError } from '../../common/errors.js';
import { hostAndPort, hostToDial } from '../../common/host-address.js';
import type { ConnectionsService, ResolvedConnection } from '../connections/connections-service.js';
import type { HostKeyStore } from '../hostkeys/host-key-store.js';
import type { EventBus } from '../router.js';
import type { SessionHandle, SessionRegistry } from '../sessions/session-registry.js';
import { type RdpClosedInfo, RdpError, type RdpFrameRect, RdpSession } from './native.js';
import { type Screenshot, encodeScreenshot } from './screenshot.js';

/**
 * An SSH tunnel to the RDP host through a jump connection; provided once SSH sessions exist.
 * `forConnection`: the RDP connection's name, which a hop's host key question names.
 */
export type RdpTunnelOpener = (
  jumpHostId: string,
  host: string,
  port: number,
  forConnection: string,
  opts: RdpConnectOptions,
) => Promise<RdpTunnel>;

/** A loopback listener carried through the jump chain; each connection FreeRDP makes goes through it. */
export interface RdpTunnel {
  host: string;
  port: number;
  /** It carries no new connection (closed, or its SSH side went away). */
  readonly closed: boolean;
  close(): void;
}

/** What one connect (rdp.open, rdp.reconnect) carries besides the saved connection. */
export interface RdpConnectOptions {
  /** The caller gave the connect up (a tab closed while connecting, a client gone). */
  signal?: AbortSignal | undefined;
  /** Passwords or passphrases typed for the SSH jump hosts on the way, as ssh.open takes them. */
  credentials?: OneTimeCredential[] | undefined;
  /** Carried by the login prompts of the jump hosts on the way (ssh.open's promptTag). */
  promptTag?: string | undefined;
}

/** How many rdp.frame events may be unacknowledged before frames are merged and held. */
const FRAME_CREDITS = 2;
/** A client that never acks (CLI, XO-only) must not freeze the picture: credits come back after this. */
const CREDIT_TIMEOUT_MS = 1000;

const NATIVE_CODES: Record<string, ErrorCode> = {
  EUNAVAILABLE: 'EUNAVAILABLE',
  ECERT_UNKNOWN: 'ECERT_UNKNOWN',
  ECERT_CHANGED: 'ECERT_CHANGED',
  EAUTH: 'EAUTH',
  EIO: 'EIO',
  ETLS: 'EIO',
  ESECURITY: 'EIO',
  ECANCELED: 'ECANCELLED',
  EINVAL: 'EBADARGS',
};

function toWraithError(err: unknown, c: ResolvedConnection, knownFingerprint: string | undefined): WraithError {
  if (err instanceof WraithError) return err;
  if (err instanceof RdpError) {
    const code = NATIVE_CODES[err.code] ?? 'EIO';
    const where = hostAndPort(c.host, c.port);
    if (code === 'ECERT_UNKNOWN') {
      return new WraithError('ECERT_UNKNOWN', `The certificate of ${where} is not trusted yet. Check its fingerprint, then trust it to connect.`, {
        host: c.host, port: c.port, keyType: 'x509', fingerprint: err.fingerprint, subject: err.subject, issuer: err.issuer,
      });
    }
    if (code === 'ECERT_CHANGED') {
      return new WraithError('ECERT_CHANGED', `The certificate of ${where} changed since you trusted it — possible man-in-the-middle; no password was sent. Forget the old certificate only if you know why it changed.`, {
        host: c.host, port: c.port, keyType: 'x509', fingerprint: err.fingerprint, knownFingerprint,
      });
    }
    return new WraithError(code, err.message, err.freerdpError ? { freerdpError: err.freerdpError } : undefined);
  }
  return new WraithError('EIO', err instanceof Error ? err.message : String(err));
}

/** One RDP tab: the native session, flow control for frames, and its place in the registry. */
class RdpTab implements SessionHandle {
  native: RdpSession | null = null;
  state: SessionInfo['state'] = 'connecting';
  reason: string | null = null;
  private credits = FRAME_CREDITS;
  private held: { x0: number; y0: number; x1: number; y1: number } | null = null;
  private creditTimer: NodeJS.Timeout | null = null;
  private tunnel: RdpTunnel | null = null;
  /** The size a resize asked for while the session was not open: its next Reconnect asks for it. */
  private sizeForReconnect: { width: number; height: number } | null = null;
  /** Aborted when the session closes: a connect (reconnect) under way is given up. */
  private readonly closing = new AbortController();
  readonly createdAt = new Date().toISOString();

  constructor(
    readonly id: string,
    /** As saved when it last connected: reconnect() takes it again, so an edit is used and a deletion refuses. */
    private connection: ResolvedConnection,
    private readonly service: RdpService,
    private readonly openedBy: SessionOpener,
  ) {}

  info(): SessionInfo {
    return {
      id: this.id,
      kind: 'rdp',
      title: this.connection.name,
      connectionId: this.connection.id,
      state: this.state,
      reason: this.reason,
      createdAt: this.createdAt,
      openedBy: this.openedBy,
    };
  }

  /**
   * `keepTunnel`: a jump host's tunnel still up from the last connect carries this one (a resize
   * re-makes the desktop, not the SSH link: no hop is asked for a password again).
   */
  async connect(width: number | undefined, height: number | undefined, opts: RdpConnectOptions = {}, keepTunnel = false): Promise<{ width: number; height: number }> {
    // Dialled as SSH dials a hop: FreeRDP looks "[::1]", as a person may save it, up as a name
    // that does not resolve. Its certificate is trusted and looked up under the bare address too,
    // and the name in any case ("Desk01" is "desk01": HostKeyStore, hostKeyHost).
    const c = { ...this.connection, host: hostToDial(this.connection.host) };
    const known = this.service.hostKeys.certificate(c.host, c.port);
    // Closing the session gives its connect up as the caller going away does (SshSession.connect):
    // a jump host's login prompt is withdrawn at once, and nothing is left connected.
    const cancelled = opts.signal ? AbortSignal.any([opts.signal, this.closing.signal]) : this.closing.signal;
    const givenUp = () =>
      new WraithError('ECANCELLED', this.state === 'closed' ? `${c.name} was closed while connecting.` : `Connecting to ${c.name} was cancelled.`);
    if (cancelled.aborted) throw givenUp();
    if (opts.credentials?.length && !c.jumpHostId) {
      throw new WraithError('EBADARGS', `credentials: ${c.name} is reached directly, with no SSH jump host to give a password for.`);
    }
    let target = { host: c.host, port: c.port };
    const kept = keepTunnel && this.tunnel && !this.tunnel.closed ? this.tunnel : null;
    if (kept) target = { host: kept.host, port: kept.port };
    else if (c.jumpHostId) {
      if (!this.service.openTunnel) throw new WraithError('EUNAVAILABLE', 'RDP through a jump host needs SSH sessions, which this host does not offer.');
      // FreeRDP dials a TCP address, so the SSH hop is offered to it as a loopback listener.
      let t: RdpTunnel;
      try {
        t = await this.service.openTunnel(c.jumpHostId, c.host, c.port, c.name, { signal: cancelled, credentials: opts.credentials, promptTag: opts.promptTag });
      } catch (err) {
        // Given up at a hop (its login prompt withdrawn): said of the desktop, as an SSH open says it of its target.
        throw cancelled.aborted ? givenUp() : err;
      }
      if (cancelled.aborted) {
        t.close();
        throw givenUp();
      }
      this.tunnel = t;
      target = { host: t.host, port: t.port };
    }
    let native: RdpSession;
    try {
      native = new RdpSession({
        host: target.host,
        port: target.port,
        username: c.username || undefined,
        password: c.password ?? undefined,
        domain: c.rdpOptions.domain,
        width: width ?? c.rdpOptions.width ?? 1280,
        height: height ?? c.rdpOptions.height ?? 800,
        security: c.rdpOptions.security ?? 'auto',
        h264: c.rdpOptions.quality !== 'lossless',
        trustedFingerprint: known?.fingerprint,
      });
    } catch (err) {
      // No addon here (or options it refused): the tunnel opened (or kept) for it carries nothing.
      this.dropTunnel();
      throw err;
    }
    native.on('frame', (rects) => this.onFrame(rects));
    native.on('resize', (size) => this.service.bus.emit('rdp.resized', { sessionId: this.id, ...size }));
    native.on('closed', (info) => this.onClosed(native, info));
    this.native = native;
    // FreeRDP's connect can be interrupted (close() while connecting rejects it with ECANCELED).
    // The session is let go first, so its end is not reported as a drop of this tab; the tunnel
    // closes at once too, which ends the connect's TCP connection wherever FreeRDP is in it.
    const letGo = () => {
      if (this.native === native) this.native = null;
      void native.close();
      this.dropTunnel();
    };
    cancelled.addEventListener('abort', letGo, { once: true });
    try {
      const size = await native.connect();
      if (cancelled.aborted) throw givenUp(); // connected just as it was given up
      this.state = 'open';
      this.reason = null;
      return { width: size.width, height: size.height };
    } catch (err) {
      this.dropTunnel();
      throw cancelled.aborted ? givenUp() : toWraithError(err, c, known?.fingerprint);
    } finally {
      cancelled.removeEventListener('abort', letGo);
    }
  }

  /**
   * Closes the jump host's tunnel this tab holds, and its SSH login with it. Every connect that
   * fails ends here too, a resize's through a kept tunnel included: the session is disconnected
   * then, and only rdp.reconnect connects it again, through a tunnel of its own (the connection
   * as saved now may reach its desktop another way), so a tunnel kept would carry nothing.
   */
  private dropTunnel(): void {
    this.tunnel?.close();
    this.tunnel = null;
  }

  /** A method, not a field read: TypeScript would keep `state` narrowed across an await. */
  isClosed(): boolean {
    return this.state === 'closed';
  }

  requireNative(): RdpSession {
    if (!this.native || this.state !== 'open') {
      throw new WraithError('ESESSIONCLOSED', `The RDP session to ${this.connection.name} is ${this.state}${this.reason ? `: ${this.reason}` : ''}.`);
    }
    return this.native;
  }

  ack(): void {
    this.credits = Math.min(FRAME_CREDITS, this.credits + 1);
    this.flushHeld();
  }

  async screenshot(opts: { maxWidth: number; maxHeight: number; format: 'jpeg' | 'png' }): Promise<Screenshot & { desktopWidth: number; desktopHeight: number }> {
    const fb = this.requireNative().getFramebuffer('rgb');
    if (!fb) throw new WraithError('ESESSIONCLOSED', 'The desktop is not available (the session is closing).');
    return { ...(await encodeScreenshot(fb, opts)), desktopWidth: fb.width, desktopHeight: fb.height };
  }

  async close(): Promise<void> {
    const native = this.native;
    this.state = 'closed';
    this.reason = null;
    this.closing.abort();
    this.clearCreditTimer();
    if (native) await native.close();
    this.dropTunnel();
    this.service.forget(this);
  }

  /**
   * rdp.reconnect: with the connection as saved now (a password changed since, a new name), as
   * ssh.reconnect does. A deleted one is refused before the session is touched: what it reached
   * stays as it is. (A resize keeps what the session connected with: it needs no unlocked vault.)
   */
  reconnect(opts: RdpConnectOptions = {}): Promise<{ width: number; height: number }> {
    this.connection = this.service.resolveAgain(this.connection, this.id);
    return this.reopen(this.sizeForReconnect?.width, this.sizeForReconnect?.height, opts);
  }

  /**
   * rdp.resize: the desktop again at the new size, through the jump host's tunnel when it is
   * still up (a password typed for a hop, and not saved, is not needed again). One that fails
   * leaves the session disconnected, as a drop does, and its tunnel closed (dropTunnel).
   *
   * A disconnected session is not connected by a resize: the size is kept for its Reconnect, and
   * the call fails ESESSIONCLOSED saying so. A resize comes from a window's size, not from a
   * person asking to connect; and it would connect with the connection as saved at the last
   * connect (it keeps that, to need no unlocked vault), to an address or with a password edited
   * since. A Reconnect takes the connection as saved now.
   */
  async resize(width: number, height: number): Promise<{ width: number; height: number }> {
    if (this.state === 'disconnected') {
      this.sizeForReconnect = { width, height };
      throw new WraithError(
        'ESESSIONCLOSED',
        `The RDP session to ${this.connection.name} is disconnected, and a resize does not connect it. Reconnect it: it then asks for ${width}x${height}.`,
      );
    }
    return this.reopen(width, height, {}, true);
  }

  /** Replaces the native session (reconnect, resize) keeping this tab's id; `keepTunnel` as connect's. */
  async reopen(width?: number, height?: number, opts: RdpConnectOptions = {}, keepTunnel = false): Promise<{ width: number; height: number }> {
    const old = this.native;
    this.native = null;
    if (old) await old.close();
    if (!keepTunnel) this.dropTunnel();
    this.state = 'connecting';
    this.service.sessions.changed(this.id);
    try {
      const size = await this.connect(width ?? old?.width, height ?? old?.height, opts, keepTunnel);
      this.sizeForReconnect = null;
      this.service.sessions.changed(this.id);
      this.service.bus.emit('rdp.resized', { sessionId: this.id, ...size });
      return size;
    } catch (err) {
      // Closed while it reconnected: it stays closed (and forgotten), not disconnected.
      if (this.isClosed()) throw err;
      this.state = 'disconnected';
      this.reason = err instanceof Error ? err.message : String(err);
      this.service.sessions.changed(this.id);
      throw err;
    }
  }

  private onFrame(rects: RdpFrameRect[]): void {
    if (this.credits > 0 && !this.held) {
      this.credits--;
      this.service.bus.emit('rdp.frame', { sessionId: this.id, rects });
    } else {
      for (const r of rects) this.hold(r.x, r.y, r.x + r.width, r.y + r.height);
    }
    if (this.credits === 0) this.armCreditTimer();
  }

  private hold(x0: number, y0: number, x1: number, y1: number): void {
    const h = this.held;
    this.held = h ? { x0: Math.min(h.x0, x0), y0: Math.min(h.y0, y0), x1: Math.max(h.x1, x1), y1: Math.max(h.y1, y1) } : { x0, y0, x1, y1 };
  }

  /** Sends everything held back as one rectangle cut from the current framebuffer. */
  private flushHeld(): void {
    const h = this.held;
    if (!h || this.credits === 0 || !this.native) return;
    const fb = this.native.getFramebuffer();
    this.held = null;
    if (!fb) return;
    const x0 = Math.max(0, h.x0);
    const y0 = Math.max(0, h.y0);
    const w = Math.min(fb.width, h.x1) - x0;
    const hgt = Math.min(fb.height, h.y1) - y0;
    if (w <= 0 || hgt <= 0) return;
    const data = new Uint8Array(w * hgt * 4);
    for (let row = 0; row < hgt; row++) {
      const from = ((y0 + row) * fb.width + x0) * 4;
      data.set(fb.data.subarray(from, from + w * 4), row * w * 4);
    }
    this.credits--;
    this.service.bus.emit('rdp.frame', { sessionId: this.id, rects: [{ x: x0, y: y0, width: w, height: hgt, data }] });
  }

  private armCreditTimer(): void {
    if (this.creditTimer) return;
    this.creditTimer = setTimeout(() => {
      this.creditTimer = null;
      this.credits = FRAME_CREDITS;
      this.flushHeld();
    }, CREDIT_TIMEOUT_MS);
    this.creditTimer.unref();
  }

  private clearCreditTimer(): void {
    if (this.creditTimer) clearTimeout(this.creditTimer);
    this.creditTimer = null;
  }

  private onClosed(native: RdpSession, info: RdpClosedInfo): void {
    if (native !== this.native) return; // an old session replaced by reopen()
    this.clearCreditTimer();
    this.dropTunnel();
    if (this.state === 'closed') return;
    this.state = 'disconnected';
    this.reason = info.message;
    this.service.bus.emit('rdp.closed', { sessionId: this.id, code: info.code, message: info.message });
    this.service.sessions.changed(this.id);
  }
}

/** RDP sessions over the FreeRDP addon, registered like every other session. */
export class RdpService {
  private readonly tabs = new Map<string, RdpTab>();

  constructor(
    readonly connections: ConnectionsService,
    readonly hostKeys: HostKeyStore,
    readonly sessions: SessionRegistry,
    readonly bus: EventBus,
    public openTunnel: RdpTunnelOpener | null = null,
  ) {}

  /**
   * `openedBy`: who asked (a window, the CLI, the XO), which the windows' tabs show. Registered
   * only once connected: a failed or cancelled open (`opts.signal`) leaves nothing behind.
   */
  async open(
    connectionId: string,
    width: number | undefined,
    height: number | undefined,
    openedBy: SessionOpener,
    opts: RdpConnectOptions = {},
  ): Promise<{ sessionId: string; width: number; height: number }> {
    const connection = this.connections.resolve(connectionId);
    if (connection.kind !== 'rdp') throw new WraithError('EBADARGS', `connectionId: ${connection.name} is an ${connection.kind.toUpperCase()} connection, not RDP.`);
    const tab = new RdpTab(randomUUID(), connection, this, openedBy);
    const size = await tab.connect(width, height, opts);
    this.tabs.set(tab.id, tab);
    this.sessions.add(tab);
    return { sessionId: tab.id, ...size };
  }

  tab(sessionId: string): RdpTab {
    const t = this.tabs.get(sessionId);
    if (!t) throw new WraithError('ENOTFOUND', `No RDP session with id ${sessionId}; it may have been closed.`);
    return t;
  }

  /** A session's saved connection as it is now; ENOTFOUND, in words, once it was deleted. */
  resolveAgain(was: ResolvedConnection, sessionId: string): ResolvedConnection {
    let now: ResolvedConnection;
    try {
      now = this.connections.resolve(was.id);
    } catch (err) {
      // Only the connection itself gone (not, say, a secret it names) is "deleted".
      if (!(err instanceof WraithError) || err.code !== 'ENOTFOUND' || err.details?.connectionId !== was.id) throw err;
      throw new WraithError('ENOTFOUND', `The saved connection ${was.name} was deleted, so this session cannot reconnect. Save the connection again, or open another.`, {
        connectionId: was.id,
        sessionId,
      });
    }
    if (now.kind !== 'rdp') throw new WraithError('EBADARGS', `${now.name} is an ${now.kind.toUpperCase()} connection now, not RDP: this session cannot reconnect with it.`);
    return now;
  }

  forget(tab: RdpTab): void {
    if (this.tabs.delete(tab.id)) this.sessions.changed(tab.id);
  }
}
