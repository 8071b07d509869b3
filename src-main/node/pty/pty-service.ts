import { randomUUID } from 'node:crypto';
import { readlinkSync, statSync } from 'node:fs';
import { constants as osConstants, homedir } from 'node:os';
import { basename } from 'node:path';
import * as nodePty from 'node-pty';
import { OK } from '../../common/contract/define.js';
import type { SessionInfo, SessionOpener } from '../../common/contract/sessions.js';
import { WraithError } from '../../common/errors.js';
import { callerLocalPath } from '../local-files.js';
import type { EventBus, Router } from '../router.js';
import type { SessionRegistry } from '../sessions/session-registry.js';
import type { FlowControlOptions, TerminalCwd, TerminalSource } from '../terminal/terminal-session.js';
import { TerminalSession } from '../terminal/terminal-session.js';
import type { TerminalService } from '../terminal/terminal-service.js';
import { drainBeforeClose } from './drain-on-exit.js';
import { PANEL_CLAIM_GRACE_MS, PanelHold } from './panel-hold.js';
import { detectShells, resolveShell } from './shells.js';
import { stopShell } from './stop-shell.js';

export interface PtyServiceDeps {
  bus: EventBus;
  sessions: SessionRegistry;
  terminals: TerminalService;
  ringBufferBytes: () => number;
  flow?: Partial<FlowControlOptions>;
  /** How long a panel's shell waits for a window to claim it (PANEL_CLAIM_GRACE_MS; shorter in tests). */
  panelGraceMs?: number;
}

interface SpawnSpec {
  shellPath: string;
  cwd: string;
}

/** A local shell in a pseudo-terminal. When the shell exits the session stays (ended) for its scrollback and relaunch. */
export class PtySession extends TerminalSession {
  private proc: nodePty.IPty | null = null;
  private state: SessionInfo['state'] = 'connecting';
  private reason: string | null = null;
  private readonly createdAt = new Date().toISOString();
  private exitWaiters: (() => void)[] = [];
  private drains = false;
  /** For a shell started for a window's local shell panel: which windows keep it there (SessionInfo.panel). */
  private readonly panelHold: PanelHold | null;

  constructor(
    id: string,
    bus: EventBus,
    private readonly registry: SessionRegistry,
    private readonly terminals: TerminalService,
    private readonly spec: SpawnSpec,
    opts: { cols: number; rows: number; ringBufferBytes: number; flow?: Partial<FlowControlOptions> },
    private readonly openedBy: SessionOpener,
    /** Started for a window's local shell panel: how long it waits for a claim once nobody holds it; null for a tab's. */
    panelGraceMs: number | null = null,
  ) {
    super(id, bus, opts);
    this.panelHold = panelGraceMs === null ? null : new PanelHold(panelGraceMs, () => this.registry.changed(this.id));
  }

  /** Whether the shell's last output survives node-pty closing the terminal (see drain-on-exit.ts). */
  get drainsOnExit(): boolean {
    return this.drains;
  }

  get pid(): number | null {
    return this.proc?.pid ?? null;
  }

  info(): SessionInfo {
    return {
      id: this.id,
      kind: 'pty',
      title: basename(this.spec.shellPath),
      connectionId: null,
      state: this.state,
      reason: this.reason,
      createdAt: this.createdAt,
      shell: this.spec.shellPath,
      openedBy: this.openedBy,
      ...(this.panelHold?.held ? { panel: true } : {}),
    };
  }

  start(): void {
    let proc: nodePty.IPty;
    try {
      proc = nodePty.spawn(this.spec.shellPath, [], {
        name: 'xterm-256color',
        cols: this.cols,
        rows: this.rows,
        cwd: this.spec.cwd,
        // Inherited so the user's PATH, API keys and config reach claude / gemini / codex.
        env: { ...process.env, TERM: 'xterm-256color', COLORTERM: 'truecolor' },
        // Raw bytes: decoding happens in the view (and in terminal.read, at safe boundaries).
        encoding: null,
      });
    } catch (err) {
      throw new WraithError('EIO', `Could not start ${this.spec.shellPath}: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.proc = proc;
    const source: TerminalSource = {
      write: (d) => proc.write(d),
      resize: (c, r) => proc.resize(c, r),
      pause: () => proc.pause(),
      resume: () => proc.resume(),
    };
    this.attachSource(source);
    // With encoding null node-pty delivers Buffers, though its typings say string.
    proc.onData((d: string | Uint8Array) => {
      if (this.proc === proc) this.output(typeof d === 'string' ? Buffer.from(d, 'utf8') : Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    });
    this.drains = drainBeforeClose(proc, (d) => {
      if (this.proc === proc) this.output(d);
    });
    proc.onExit(({ exitCode, signal }) => this.exited(proc, exitCode, signal ?? 0));
    this.state = 'open';
    this.reason = null;
  }

  /**
   * Starts the same shell again in this session, after it exited; scrollback is kept. The shell
   * and its folder are checked again as a new spawn checks them: node-pty would otherwise start a
   * program that is gone (moved, removed) as a child that prints "execvp(3) failed" and exits 1,
   * an exit that asks to be relaunched again.
   */
  relaunch(): void {
    if (this.state === 'closed') throw new WraithError('ESESSIONCLOSED', 'This session was closed; spawn a new shell.');
    if (this.proc) throw new WraithError('EBADARGS', `${this.info().title} is still running.`);
    checkSpawnable(this.spec.shellPath, this.spec.cwd);
    this.start();
    this.registry.changed(this.id);
  }

  /**
   * The window of this connection shows the shell in its local shell panel (after a reload, or
   * the spawn that started it there): see PanelHold. Only a shell started for a panel can be one's.
   */
  claimForPanel(connection: AbortSignal | undefined): void {
    if (this.state === 'closed') throw new WraithError('ESESSIONCLOSED', 'This local shell was closed; start a new one in the panel.');
    if (!this.panelHold) {
      throw new WraithError('EBADARGS', `Session ${this.id} is a local shell tab's, not started for a local shell panel (pty.spawn with panel: true).`);
    }
    this.panelHold.claim(connection);
  }

  async cwd(): Promise<TerminalCwd> {
    const pid = this.proc?.pid;
    if (pid && process.platform === 'linux') {
      try {
        return { cwd: readlinkSync(`/proc/${pid}/cwd`), source: 'proc' };
      } catch {
        // The shell just exited; fall through.
      }
    }
    if (this.osc7.cwd) return { cwd: this.osc7.cwd, source: 'osc7' };
    return { cwd: null, source: 'unknown' };
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const proc = this.proc;
    this.state = 'closed';
    this.reason = 'Closed.';
    this.panelHold?.dispose();
    if (proc) {
      // A hang-up first, as a closing terminal sends; a shell or job that ignores it gets SIGTERM,
      // then SIGKILL (stop-shell.ts).
      await stopShell(proc.pid, new Promise<void>((resolve) => this.exitWaiters.push(resolve)));
    }
    this.disposeTerminal();
    this.terminals.remove(this.id);
    this.registry.changed(this.id);
  }

  private exited(proc: nodePty.IPty, code: number, signal: number): void {
    if (this.proc !== proc) return;
    this.proc = null;
    this.detachSource();
    const waiters = this.exitWaiters;
    this.exitWaiters = [];
    for (const w of waiters) w();
    if (this.state === 'closed') return;
    const name = basename(this.spec.shellPath);
    const sig = signal ? signalName(signal) : null;
    this.reason = sig ? `${name} was ended by ${sig}.` : `${name} exited with code ${code}.`;
    this.state = 'disconnected';
    this.emitExit(sig ? null : code, sig, this.reason);
    this.registry.changed(this.id);
  }
}

/**
 * The shell as a path to start, and the folder to start it in, or an ENOTFOUND saying which is
 * missing: a new spawn and a relaunch refuse alike.
 */
function checkSpawnable(shell: string, cwd: string): SpawnSpec {
  const shellPath = resolveShell(shell);
  if (!shellPath) throw new WraithError('ENOTFOUND', `No shell "${shell}" on this machine: it may have been moved or removed. Choose another shell.`);
  let isDir = false;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new WraithError('ENOTFOUND', `No directory ${cwd} to start the shell in.`);
  return { shellPath, cwd };
}

function signalName(n: number): string {
  for (const [name, num] of Object.entries(osConstants.signals)) if (num === n) return name;
  return `signal ${n}`;
}

/** Local shells: `pty.shells`, `pty.spawn`, `pty.relaunch`, `pty.panel`; I/O through TerminalService. */
export class PtyService {
  constructor(private readonly deps: PtyServiceDeps) {}

  shells() {
    return detectShells();
  }

  /**
   * `openedBy`: who asked (a window, the CLI, the XO), which the windows' tabs show; `panel`: for
   * that window's local shell panel, held by its connection (`connection`: aborted as it closes).
   */
  spawn(
    input: { shell: string; cols: number; rows: number; cwd?: string | undefined; panel?: boolean | undefined },
    openedBy: SessionOpener,
    connection?: AbortSignal,
  ): { sessionId: string } {
    const spec = checkSpawnable(input.shell, input.cwd === undefined ? homedir() : callerLocalPath(input.cwd, 'folder'));
    const session = new PtySession(randomUUID(), this.deps.bus, this.deps.sessions, this.deps.terminals, spec, {
      cols: input.cols,
      rows: input.rows,
      ringBufferBytes: this.deps.ringBufferBytes(),
      flow: this.deps.flow,
    }, openedBy, input.panel ? (this.deps.panelGraceMs ?? PANEL_CLAIM_GRACE_MS) : null);
    session.start();
    this.deps.terminals.add(session);
    this.deps.sessions.add(session);
    if (input.panel) session.claimForPanel(connection);
    return { sessionId: session.id };
  }

  session(id: string): PtySession {
    const s = this.deps.terminals.get(id);
    if (!(s instanceof PtySession)) throw new WraithError('EBADARGS', `Session ${id} is not a local shell.`);
    return s;
  }

  register(router: Router): void {
    router.handle('pty.shells', () => this.shells());
    router.handle('pty.spawn', (i, ctx) => this.spawn(i, ctx.origin, ctx.connectionSignal));
    router.handle('pty.relaunch', (i) => (this.session(i.sessionId).relaunch(), OK));
    router.handle('pty.panel', (i, ctx) => (this.session(i.sessionId).claimForPanel(ctx.connectionSignal), OK));
  }
}
