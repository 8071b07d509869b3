import { events, methods } from '../common/contract/index.js';
import { OK } from '../common/contract/define.js';
import { WraithError } from '../common/errors.js';
import { describeContract } from '../common/contract/describe.js';
import { AiService } from './ai/ai-service.js';
import { AuditLog } from './audit/audit-log.js';
import { type Db, openDatabase } from './db/database.js';
import { ConnectionsService } from './connections/connections-service.js';
import { importSshConfig } from './connections/ssh-config-import.js';
import { HostKeyStore } from './hostkeys/host-key-store.js';
import { packageVersion } from './paths.js';
import { RdpService } from './rdp/rdp-service.js';
import { EventBus, Router } from './router.js';
import { PasswordPromptTracker, Redactor } from './security/redact.js';
import { SessionRegistry } from './sessions/session-registry.js';
import { SettingsService } from './settings/settings-service.js';
import { PtyService } from './pty/pty-service.js';
import { SshService } from './ssh/ssh-service.js';
import type { FlowControlOptions } from './terminal/terminal-session.js';
import { BroadcastGroup } from './terminal/broadcast.js';
import { TerminalService } from './terminal/terminal-service.js';
import { registerSftpHandlers } from './sftp/sftp-handlers.js';
import { DbOrphanTemps } from './sftp/orphan-temps.js';
import { type SavePathChooser, SftpService } from './sftp/sftp-service.js';
import { type OsKeyWrapper, Vault } from './vault/vault.js';

export interface AppOptions {
  dataDir: string;
  host: 'electron' | 'server' | 'in-process';
  /** Electron's safeStorage; absent in headless hosts. */
  osKeyWrapper?: OsKeyWrapper | null;
  /** The desktop's native save dialog (Electron's); sftp.saveAs needs it. */
  chooseSavePath?: SavePathChooser | null;
  /**
   * Tuning for terminals (tests, benchmarks): flow-control watermarks, login prompt timeout, how
   * long a local shell panel's shell waits for its window to claim it again (PANEL_CLAIM_GRACE_MS).
   */
  terminal?: { flow?: Partial<FlowControlOptions>; promptTimeoutMs?: number; panelGraceMs?: number | undefined };
}

/**
 * Everything a host serves: the services, wired to each other and registered into one router.
 * Hosts (Electron, `wraith serve`, tests) create one App and put a transport in front of it.
 */
export class App {
  readonly router = new Router();
  readonly bus = new EventBus();
  readonly db: Db;
  readonly vault: Vault;
  readonly settings: SettingsService;
  readonly connections: ConnectionsService;
  readonly hostKeys: HostKeyStore;
  readonly sessions: SessionRegistry;
  readonly rdp: RdpService;
  readonly redactor = new Redactor();
  readonly passwordPrompts = new PasswordPromptTracker(this.redactor);
  readonly audit: AuditLog;
  readonly ai: AiService;
  readonly terminals: TerminalService;
  /** Which terminal sessions share typed input (broadcast.get|set). */
  readonly broadcast: BroadcastGroup;
  readonly ssh: SshService;
  readonly pty: PtyService;
  readonly sftp: SftpService;
  private disposed = false;

  constructor(readonly options: AppOptions) {
    this.db = openDatabase(options.dataDir);
    this.vault = new Vault(this.db, options.dataDir, options.osKeyWrapper ?? null);
    this.settings = new SettingsService(this.db, (settings) => this.bus.emit('settings.changed', settings));
    this.connections = new ConnectionsService(this.db, this.vault);
    this.hostKeys = new HostKeyStore(this.db);
    this.sessions = new SessionRegistry(this.bus);
    this.rdp = new RdpService(this.connections, this.hostKeys, this.sessions, this.bus);
    // SFTP rides on the SSH session's connection (one cached SFTP channel per session).
    this.sftp = new SftpService((sessionId) => this.ssh.sftp(sessionId), {
      emitProgress: (p) => this.bus.emit('transfer.progress', p),
      // Temps a lost connection kept on a server go through the next session to that connection.
      siteOf: (sessionId) => this.ssh.session(sessionId).connectionId,
      // … also after a restart: the database remembers them until they are gone.
      orphanStore: new DbOrphanTemps(this.db),
    });
    this.registerFoundation();
    this.registerRdp();
    // Whatever a person types at a password prompt becomes a secret the redactor removes.
    this.broadcast = new BroadcastGroup(
      (id) => void this.terminals.get(id),
      (sessionIds) => this.bus.emit('broadcast.changed', { sessionIds }),
    );
    this.terminals = new TerminalService(
      (id, data) => this.passwordPrompts.noteInput(id, data),
      (id) => this.broadcast.drop(id),
    );
    const terminalDeps = {
      bus: this.bus,
      sessions: this.sessions,
      terminals: this.terminals,
      ringBufferBytes: () => this.settings.get()['terminal.ringBufferBytes'],
      flow: options.terminal?.flow,
    };
    this.ssh = new SshService({
      ...terminalDeps,
      connections: this.connections,
      hostKeys: this.hostKeys,
      keepaliveIntervalMs: () => this.settings.get()['ssh.keepaliveIntervalMs'],
      promptTimeoutMs: options.terminal?.promptTimeoutMs,
      noteSecret: (secret) => this.redactor.addSecret(secret),
      // Transfers end, and their temp files go, over the connection before it closes …
      beforeClose: (sessionId) => this.sftp.sessionClosing(sessionId),
      // … and those a lost connection kept go as soon as a session to that server is up again.
      connected: (sessionId) => void this.sftp.sessionConnected(sessionId),
    });
    this.pty = new PtyService({ ...terminalDeps, panelGraceMs: options.terminal?.panelGraceMs });
    this.rdp.openTunnel = (via, host, port, forConnection, opts) => this.ssh.openTunnel(via, host, port, forConnection, opts);
    this.registerTerminals();
    this.registerSftp();
    this.audit = new AuditLog(this.db);
    this.ai = new AiService({
      db: this.db,
      router: this.router,
      bus: this.bus,
      vault: this.vault,
      sessions: this.sessions,
      audit: this.audit,
      redactor: this.redactor,
      tracker: this.passwordPrompts,
      dataDir: options.dataDir,
    });
    this.registerAi();
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.ai.dispose();
    // Transfers first: their remote temp files are removed over the SSH connections.
    await this.sftp.dispose();
    this.ssh.dispose();
    await this.sessions.closeAll();
    this.db.close();
  }

  private registerFoundation(): void {
    const r = this.router;
    const version = packageVersion();
    // Built once: the contract does not change while a host runs.
    let described: ReturnType<typeof describeContract> | null = null;
    r.handle('health.info', () => {
      described ??= describeContract(methods, events, (name) => r.isImplemented(name));
      return { name: 'wraith', version, host: this.options.host, dataDir: this.options.dataDir, ...described };
    });
    r.handle('health.ping', () => OK);

    r.handle('vault.status', () => this.vault.status());
    r.handle('vault.init', (i) => this.vault.init(i));
    r.handle('vault.unlock', (i) => this.vault.unlock(i.password));
    r.handle('vault.lock', () => this.vault.lock());
    r.handle('vault.setSecret', (i) => ({ id: this.vault.setSecret(i) }));
    r.handle('vault.deleteSecret', (i) => (this.vault.deleteSecret(i.id), OK));
    r.handle('vault.getSecret', (i) => this.vault.getSecret(i.id));

    r.handle('settings.get', () => this.settings.get());
    r.handle('settings.set', (i) => this.settings.set(i));

    r.handle('connections.list', (i) => this.connections.list(i ?? {}));
    r.handle('connections.get', (i) => this.connections.get(i.id));
    // A connection that could never connect is refused on its fields, whoever asks (form, CLI, XO).
    // Every window's tree (and the XO's view) follows a change, whoever made it: the CLI too.
    const changed = async <T>(result: T | Promise<T>): Promise<T> => {
      const done = await result;
      this.bus.emit('connections.changed', {});
      return done;
    };
    r.handle('connections.create', ({ secrets, ...fields }) => {
      this.connections.assertSavable(null, fields, secrets);
      return changed(this.connections.create(fields, secrets));
    });
    r.handle('connections.update', (i) => {
      this.connections.assertSavable(i.id, i.patch, i.secrets);
      return changed(this.connections.update(i.id, i.patch, i.secrets));
    });
    r.handle('connections.duplicate', (i) => changed(this.connections.duplicate(i.id)));
    r.handle('connections.delete', (i) => changed((this.connections.delete(i.id), OK)));
    r.handle('connections.importSshConfig', (i) => changed(importSshConfig(this.connections, i ?? {})));
    r.handle('connections.groups.create', (i) => changed(this.connections.createGroup(i.name, i.parentId)));
    r.handle('connections.groups.update', ({ id, ...patch }) => changed(this.connections.updateGroup(id, patch)));
    r.handle('connections.groups.delete', (i) => changed((this.connections.deleteGroup(i.id), OK)));

    r.handle('hostkeys.list', () => this.hostKeys.list());
    r.handle('hostkeys.trust', (i) => this.hostKeys.trust(i.kind, i.host, i.port, i.keyType, i.fingerprint));
    r.handle('hostkeys.forget', (i) => ({ ok: true, forgotten: this.hostKeys.forget(i.kind, i.host, i.port) }));
    r.handle('hostkeys.matchHashed', (i) => this.hostKeys.matchHashed(i.names));
    r.handle('hostkeys.revoked', () => this.hostKeys.listRevoked());
    r.handle('hostkeys.liftRevocation', (i) => ({ ok: true, lifted: this.hostKeys.liftRevocation(i.fingerprint) }));
    r.handle('hostkeys.importKnownHosts', (i) => this.hostKeys.importKnownHosts(i?.path));

    r.handle('sessions.list', () => this.sessions.list());
    r.handle('sessions.close', async (i) => (await this.sessions.close(i.sessionId), OK));
  }

  private registerRdp(): void {
    const r = this.router;
    const rdp = this.rdp;
    r.handle('rdp.open', (i, ctx) => rdp.open(i.connectionId, i.width, i.height, ctx.origin, { signal: ctx.signal, credentials: i.credentials, promptTag: i.promptTag }));
    r.handle('rdp.close', async (i) => (await rdp.tab(i.sessionId).close(), OK));
    r.handle('rdp.reconnect', (i, ctx) => rdp.tab(i.sessionId).reconnect({ signal: ctx.signal, credentials: i.credentials, promptTag: i.promptTag }));
    r.handle('rdp.framebuffer', (i) => {
      const fb = rdp.tab(i.sessionId).requireNative().getFramebuffer();
      if (!fb) throw new WraithError('ESESSIONCLOSED', 'The desktop is not available (the session is closing).');
      return fb;
    });
    r.handle('rdp.ack', (i) => (rdp.tab(i.sessionId).ack(), OK));
    r.handle('rdp.mouse', (i) => {
      const s = rdp.tab(i.sessionId).requireNative();
      if (i.action === 'move') s.mouseMove(i.x, i.y);
      else if (i.action === 'down' || i.action === 'up') s.mouseButton(i.button, i.action === 'down', i.x, i.y);
      else if (i.action === 'click' || i.action === 'doubleclick') s.click(i.x, i.y, i.button, i.action === 'click' ? 1 : 2);
      else s.wheel(i.delta, i.horizontal, i.x, i.y);
      return OK;
    });
    r.handle('rdp.key', (i) => ({ mapped: rdp.tab(i.sessionId).requireNative().sendKeyCode(i.code, i.down) }));
    r.handle('rdp.type', (i) => (rdp.tab(i.sessionId).requireNative().type(i.text), OK));
    r.handle('rdp.keypress', (i) => {
      const s = rdp.tab(i.sessionId).requireNative();
      try {
        s.keypress(i.keys);
      } catch (err) {
        throw new WraithError('EBADARGS', `keys: ${err instanceof Error ? err.message : String(err)}`);
      }
      return OK;
    });
    r.handle('rdp.resize', (i) => rdp.tab(i.sessionId).resize(i.width, i.height));
    r.handle('rdp.screenshot', async (i) => {
      const shot = await rdp.tab(i.sessionId).screenshot(i);
      return { ...shot, data: shot.data.toString('base64') };
    });
  }

  private registerTerminals(): void {
    this.terminals.register(this.router);
    this.router.handle('broadcast.get', () => ({ sessionIds: this.broadcast.get() }));
    this.router.handle('broadcast.set', (i) => ({ sessionIds: this.broadcast.set(i.sessionIds) }));
    this.ssh.register(this.router);
    this.pty.register(this.router);
  }

  private registerSftp(): void {
    registerSftpHandlers(this.router, this.sftp, { httpLinks: this.options.host === 'server', chooseSavePath: this.options.chooseSavePath });
  }

  private registerAi(): void {
    const r = this.router;
    const ai = this.ai;
    r.handle('ai.send', (i, ctx) => ai.send(i, ctx));
    r.handle('ai.abort', (i) => ({ aborted: ai.abort(i) }));
    r.handle('ai.runs', () => ai.listRuns());
    r.handle('ai.approve', (i, ctx) => (ai.approve(i.runId, i.toolUseId, i.all, ctx), OK));
    r.handle('ai.deny', (i, ctx) => (ai.deny(i.runId, i.toolUseId, i.reason, ctx), OK));
    r.handle('ai.mode.get', () => ({ mode: ai.getMode() }));
    r.handle('ai.mode.set', (i) => ({ mode: ai.setMode(i.mode) }));
    r.handle('ai.conversations.list', (i) => ai.listConversations(i?.limit ?? 50, i?.offset ?? 0));
    r.handle('ai.conversations.get', (i) => ai.getConversation(i.id));
    r.handle('ai.conversations.rename', (i) => ai.store.rename(i.id, i.title));
    r.handle('ai.conversations.delete', (i) => (ai.store.delete(i.id), OK));
    r.handle('ai.conversations.search', (i) => ai.store.search(i.query, i.limit));
    r.handle('ai.usage', (i) => ai.usage(i?.conversationId));
    r.handle('ai.settings.get', () => ai.settingsView());
    r.handle('ai.settings.set', (i) => ai.setSettings(i));
    r.handle('audit.list', (i) => this.audit.list(i ?? { limit: 100 }));
  }
}
