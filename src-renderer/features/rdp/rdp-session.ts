import { asWraithError } from '../../composables/errors.js';
import { useConnectionsStore } from '../../stores/connections.js';
import { type Problem, type RdpTab, useSessionsStore } from '../../stores/sessions.js';
import { useVaultStore } from '../../stores/vault.js';
import { useHost } from '../../transport/index.js';

function problemOf(err: unknown): Problem {
  const e = asWraithError(err);
  return { code: e.code, message: e.message, details: e.details ?? {} };
}

/** The certificate the host asked about (ECERT_UNKNOWN / ECERT_CHANGED details). */
export function certificateOf(
  tab: RdpTab,
): { host: string; port: number; fingerprint: string; knownFingerprint: string | null; subject: string | null; issuer: string | null } | null {
  const d = tab.problem?.details ?? {};
  const { host, port, fingerprint, knownFingerprint, subject, issuer } = d;
  if (typeof host !== 'string' || typeof port !== 'number' || typeof fingerprint !== 'string') return null;
  const text = (v: unknown) => (typeof v === 'string' && v ? v : null);
  return { host, port, fingerprint, knownFingerprint: text(knownFingerprint), subject: text(subject), issuer: text(issuer) };
}

/**
 * The life of an RDP tab's session: open (certificate checked like an SSH host key), trust or
 * forget a certificate, reconnect. State goes on the store's tab, so the tab strip shows it.
 */
export function useRdpSession(key: string) {
  const host = useHost();
  const sessions = useSessionsStore();
  const vault = useVaultStore();
  const connections = useConnectionsStore();

  const tab = (): RdpTab | undefined => sessions.findRdp(key);

  /** Connects at the connection's size, or at `fit` (the pane's size) when it has none. */
  async function open(fit: { width: number; height: number }): Promise<void> {
    const t = tab();
    if (!t || t.sessionId) return;
    t.phase = 'starting';
    t.problem = null;
    const saved = connections.byId.get(t.connectionId)?.rdpOptions;
    const clamp = (v: number) => Math.max(200, Math.min(8192, Math.floor(v)));
    const size = saved?.width && saved.height ? {} : { width: clamp(fit.width), height: clamp(fit.height) };
    try {
      const r = await vault.withUnlocked(`Connect to ${t.title}`, () => host.call('rdp.open', { connectionId: t.connectionId, ...size }));
      t.sessionId = r.sessionId;
      t.phase = 'open';
    } catch (err) {
      t.problem = problemOf(err);
      const code = t.problem.code;
      t.phase = code === 'ECERT_UNKNOWN' ? 'hostkey-unknown' : code === 'ECERT_CHANGED' ? 'hostkey-changed' : 'failed';
    }
  }

  async function trustAndOpen(fit: { width: number; height: number }): Promise<void> {
    const t = tab();
    const cert = t && certificateOf(t);
    if (!cert) return;
    await host.call('hostkeys.trust', { kind: 'rdp', host: cert.host, port: cert.port, keyType: 'x509', fingerprint: cert.fingerprint });
    await open(fit);
  }

  /** After a changed certificate, deliberately: forget the old one, then judge the new one. */
  async function forgetAndRetry(fit: { width: number; height: number }): Promise<void> {
    const t = tab();
    const cert = t && certificateOf(t);
    if (!cert) return;
    await host.call('hostkeys.forget', { kind: 'rdp', host: cert.host, port: cert.port });
    await open(fit);
  }

  async function reconnect(): Promise<void> {
    const t = tab();
    if (!t?.sessionId) return;
    const sessionId = t.sessionId;
    t.phase = 'starting';
    try {
      await vault.withUnlocked(`Reconnect to ${t.title}`, () => host.call('rdp.reconnect', { sessionId }));
      t.phase = 'open';
      t.problem = null;
    } catch (err) {
      t.problem = problemOf(err);
      // The session id is kept by the host; a certificate question still needs an answer.
      t.phase = 'disconnected';
    }
  }

  return { tab, open, trustAndOpen, forgetAndRetry, reconnect };
}
