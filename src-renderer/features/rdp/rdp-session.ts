import { useConnectionsStore } from '../../stores/connections.js';
import { type RdpTab, useSessionsStore } from '../../stores/sessions.js';
import { useVaultStore } from '../../stores/vault.js';
import { useHost } from '../../transport/index.js';

/**
 * The question is about the SSH host key of the jump host on the way (EHOSTKEY_*), which the SSH
 * tab's card asks, rather than about the desktop's certificate.
 */
export function asksAboutJumpHost(tab: RdpTab): boolean {
  return tab.problem?.code.startsWith('EHOSTKEY_') ?? false;
}

/** The certificate the host asked about (ECERT_UNKNOWN / ECERT_CHANGED details). */
export function certificateOf(
  tab: RdpTab,
): { host: string; port: number; fingerprint: string; knownFingerprint: string | null; subject: string | null; issuer: string | null } | null {
  if (asksAboutJumpHost(tab)) return null;
  const d = tab.problem?.details ?? {};
  const { host, port, fingerprint, knownFingerprint, subject, issuer } = d;
  if (typeof host !== 'string' || typeof port !== 'number' || typeof fingerprint !== 'string') return null;
  const text = (v: unknown) => (typeof v === 'string' && v ? v : null);
  return { host, port, fingerprint, knownFingerprint: text(knownFingerprint), subject: text(subject), issuer: text(issuer) };
}

/**
 * The life of an RDP tab's session: open (certificate checked like an SSH host key, and the host
 * keys of a jump host on the way, whose password is asked for when none is saved), trust or
 * forget a certificate or key, reconnect. State goes on the store's tab, so the tab strip shows it.
 */
export function useRdpSession(key: string) {
  const host = useHost();
  const sessions = useSessionsStore();
  const vault = useVaultStore();
  const connections = useConnectionsStore();

  const tab = (): RdpTab | undefined => sessions.findRdp(key);

  /**
   * Connects at the connection's size, or at `fit` (the pane's size) when it has none, with the
   * jump host passwords typed into its card so far (`fromCard`: this connect follows one being
   * typed). Closing the tab meanwhile gives the connect up on the host.
   */
  async function open(fit: { width: number; height: number }, fromCard = false): Promise<void> {
    const t = tab();
    if (!t || t.sessionId) return;
    if (!fromCard) t.credentialTries = 0;
    // A tab of a deleted connection cannot open it again: it says so instead of asking the host.
    if (sessions.connectionDeleted(t)) {
      t.phase = 'failed';
      t.problem = sessions.deletedProblem(t);
      return;
    }
    t.phase = 'starting';
    t.problem = null;
    const saved = connections.byId.get(t.connectionId)?.rdpOptions;
    const clamp = (v: number) => Math.max(200, Math.min(8192, Math.floor(v)));
    const size = saved?.width && saved.height ? {} : { width: clamp(fit.width), height: clamp(fit.height) };
    try {
      const r = await sessions.untilClosed(key, (signal) =>
        vault.withUnlocked(`Connect to ${t.title}`, () =>
          sessions.opening(() =>
            sessions.tagged(key, (promptTag) => host.call('rdp.open', { connectionId: t.connectionId, ...size, promptTag, ...sessions.typedFor(key) }, { signal })),
          ),
        ),
      );
      // Given up because its tab closed: there is nobody to tell.
      if (!r) return;
      // Closed as its answer came: the desktop is let go rather than kept where no tab shows it.
      if (await sessions.closedMeanwhile(key, r.sessionId)) return;
      sessions.connectedWithTyped(t);
      t.sessionId = r.sessionId;
      t.phase = 'open';
    } catch (err) {
      // Deleted elsewhere (the CLI, another window): the tab learns it and says so.
      if (await sessions.learnDeleted(t, err)) {
        t.phase = 'failed';
        t.problem = sessions.deletedProblem(t);
        return;
      }
      sessions.fail(t, err, 'failed');
    }
  }

  /**
   * Connects again after a certificate decision: a tab whose session dropped reconnects that
   * session (same id, as Reconnect does; open() would see it has one and do nothing); a tab that
   * never opened opens one.
   */
  async function connectAfterDecision(fit: { width: number; height: number }): Promise<void> {
    if (tab()?.sessionId) await reconnect();
    else await open(fit);
  }

  /**
   * Connects with the jump host's password typed into the tab's card (saved in the vault only
   * when `save`): a dropped session reconnects, a tab that never opened opens. A refusal brings
   * the card back with the server's answer.
   */
  async function connectWithCredential(secret: string, save: boolean, fit: { width: number; height: number }): Promise<void> {
    const t = tab();
    if (!t || !sessions.keepTyped(t, secret, save)) return;
    if (t.sessionId) await reconnect(true);
    else await open(fit, true);
  }

  /** Trusts the certificate, or the jump host's key, the card showed; then connects again. */
  async function trustAndOpen(fit: { width: number; height: number }): Promise<void> {
    const t = tab();
    if (t && (await sessions.trustShownIdentity(t))) await connectAfterDecision(fit);
  }

  /** After a changed certificate or jump host key, deliberately: forget the old one, then judge the new one. */
  async function forgetAndRetry(fit: { width: number; height: number }): Promise<void> {
    const t = tab();
    if (t && (await sessions.forgetShownIdentity(t))) await connectAfterDecision(fit);
  }

  /** Reconnects a dropped session (`fromCard`: this follows a password typed into its card). */
  async function reconnect(fromCard = false): Promise<void> {
    const t = tab();
    if (!t?.sessionId) return;
    if (!fromCard) t.credentialTries = 0;
    if (sessions.connectionDeleted(t)) {
      gone(t);
      return;
    }
    const sessionId = t.sessionId;
    const was = t.phase;
    t.phase = 'starting';
    try {
      await vault.withUnlocked(`Reconnect to ${t.title}`, () => sessions.tagged(key, (promptTag) => host.call('rdp.reconnect', { sessionId, promptTag, ...sessions.typedFor(key) })));
      sessions.connectedWithTyped(t);
      t.phase = 'open';
      t.problem = null;
    } catch (err) {
      // Deleted elsewhere (the CLI, another window): the host refused before touching the session.
      if (await sessions.learnDeleted(t, err)) {
        t.phase = was;
        gone(t);
        return;
      }
      // The host keeps the session (and its id). A server whose certificate changed, or whose
      // certificate was forgotten, asks the question a new tab asks (its card); Reconnect alone
      // would only fail the same way again.
      sessions.fail(t, err, 'disconnected');
    }
  }

  /**
   * Reconnect on a tab of a deleted connection: a running session runs on (its toolbar's
   * Reconnect goes grey); a question asked goes back to "Disconnected", its card saying why.
   */
  function gone(t: RdpTab): void {
    if (t.phase !== 'disconnected' && t.phase !== 'open') {
      t.phase = 'disconnected';
      t.problem = sessions.deletedProblem(t);
    }
  }

  return { tab, open, connectWithCredential, trustAndOpen, forgetAndRetry, reconnect };
}
