/**
 * Where the whole machine's CPU went during a timed run, by process group (Linux /proc).
 *
 * On a 2-core machine a terminal flood has five busy parties: sshd and the remote program, the
 * Wraith host, Chromium's network service (which parses the WebSocket), the page's renderer
 * process (the WebSocket worker and xterm.js) and the GPU/compositor. A ratio against xterm.js
 * alone means little without knowing whether the page was starved by a slow path or by the
 * other parties taking the cores: this says which.
 *
 * Each process counts its own time plus that of children it reaped meanwhile (cutime/cstime),
 * so a `cat` that ran and exited during the run lands in the shell that started it. Busy time
 * of the whole machine comes from /proc/stat; interrupt time (loopback TCP is mostly softirq) is
 * charged to no process and is shown on its own; "other" is what nothing listed accounts for,
 * the bench process itself included.
 *
 * For the busiest renderer's main thread (xterm.js runs there) it also tells apart the time the
 * thread ran and the time it was ready to run but waited for a core (/proc/PID/schedstat, the
 * kernel's run-queue delay): a page that is slow because it was starved waits, a page that is
 * slow because nothing reached it sleeps.
 */
import { readFileSync, readdirSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

interface Proc {
  ppid: number;
  ticks: number;
  comm: string;
  cmdline: string;
  /** The main thread's ns on a core and ns ready but waiting for one (schedstat); Chromium renderers only. */
  mainThread?: { runNs: number; waitNs: number };
}

export interface CpuSnapshot {
  at: number;
  /** user + nice + system + irq + softirq of all cores (not idle, iowait or steal). */
  machineBusyTicks: number;
  /** irq + softirq: kernel work (much of it loopback TCP) that no process is charged for. */
  irqTicks: number;
  /** Time the hypervisor gave this VM's cores to somebody else. */
  stealTicks: number;
  procs: Map<number, Proc>;
}

function readProc(pid: number): Proc | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After "(comm) ": [0] state, [1] ppid, … [11] utime, [12] stime, [13] cutime, [14] cstime.
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    const proc: Proc = { ppid: Number(f[1]), ticks, comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), cmdline };
    if (/chrom/.test(cmdline) && cmdline.includes('--type=renderer')) {
      // "<ns on a core> <ns waiting on a run queue> <timeslices>", of the thread group leader.
      const [runNs = 0, waitNs = 0] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
      proc.mainThread = { runNs, waitNs };
    }
    return proc;
  } catch {
    return null; // exited meanwhile
  }
}

export function cpuSnapshot(): CpuSnapshot {
  const procs = new Map<number, Proc>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProc(Number(name));
    if (p) procs.set(Number(name), p);
  }
  // "cpu user nice system idle iowait irq softirq steal …"
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { at: performance.now(), machineBusyTicks: user + nice + system + irq + softirq, irqTicks: irq + softirq, stealTicks: steal, procs };
}

/** Pids the bench started, by the group name to print them under. */
export interface CpuRoots {
  host: number | undefined;
  sshd: number | undefined;
}

function group(pid: number, snap: CpuSnapshot, roots: CpuRoots): string {
  if (pid === roots.host) return 'host';
  if (pid === process.pid) return 'bench';
  for (let p: number | undefined = pid, hops = 0; p && hops < 64; p = snap.procs.get(p)?.ppid, hops++) {
    if (p === roots.sshd) return 'sshd+shell';
  }
  const cmd = snap.procs.get(pid)?.cmdline ?? '';
  if (!/chrom/.test(cmd)) return 'other';
  const type = /--type=(\S+)/.exec(cmd)?.[1];
  if (type === undefined) return 'chromium browser';
  if (type === 'utility') return /NetworkService|network\.mojom/.test(cmd) ? 'chromium network' : 'chromium utility';
  return `chromium ${type}`;
}

/** CPU ms per group between two snapshots, plus "machine" (all cores) and "other" (the rest). */
export interface CpuSplit {
  wallMs: number;
  groups: Map<string, number>;
  /** The processes behind "other", by name, biggest first. */
  others: [string, number][];
  /** The main thread of the renderer that ran most: ms on a core, ms ready but waiting for one. */
  pageMain: { onCpuMs: number; waitingMs: number } | null;
}

export function cpuSplit(before: CpuSnapshot, after: CpuSnapshot, roots: CpuRoots): CpuSplit {
  const groups = new Map<string, number>();
  const others = new Map<string, number>();
  let listed = 0;
  let pageMain: CpuSplit['pageMain'] = null;
  for (const [pid, p] of after.procs) {
    const was = before.procs.get(pid)?.mainThread;
    if (p.mainThread && was) {
      const onCpuMs = (p.mainThread.runNs - was.runNs) / 1e6;
      if (onCpuMs > (pageMain?.onCpuMs ?? 0)) pageMain = { onCpuMs, waitingMs: (p.mainThread.waitNs - was.waitNs) / 1e6 };
    }
    const d = (p.ticks - (before.procs.get(pid)?.ticks ?? 0)) * TICK_MS;
    if (d <= 0) continue;
    const g = group(pid, after, roots);
    groups.set(g, (groups.get(g) ?? 0) + d);
    if (g === 'other') others.set(p.comm, (others.get(p.comm) ?? 0) + d);
    listed += d;
  }
  const machine = (after.machineBusyTicks - before.machineBusyTicks) * TICK_MS;
  const irq = (after.irqTicks - before.irqTicks) * TICK_MS;
  groups.set('irq+softirq', irq);
  groups.set('other', (groups.get('other') ?? 0) + Math.max(0, machine - listed - irq));
  groups.set('machine', machine);
  groups.set('steal', (after.stealTicks - before.stealTicks) * TICK_MS);
  return { wallMs: after.at - before.at, groups, others: [...others.entries()].sort((a, b) => b[1] - a[1]), pageMain };
}

/** "machine 1.84 cores: host 0.41, chromium renderer 0.72, …" (cores = CPU ms / wall ms), biggest first. */
export function formatCpuSplit(split: CpuSplit): string {
  const cores = (ms: number) => (ms / split.wallMs).toFixed(2);
  const parts = [...split.groups.entries()]
    .filter(([g, ms]) => g !== 'machine' && g !== 'steal' && ms / split.wallMs >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .map(([g, ms]) => {
      if (g !== 'other') return `${g} ${cores(ms)}`;
      const named = split.others.filter(([, o]) => o / split.wallMs >= 0.005).slice(0, 3);
      return `other ${cores(ms)}${named.length ? ` (${named.map(([n, o]) => `${n} ${cores(o)}`).join(', ')}, …)` : ''}`;
    });
  const steal = split.groups.get('steal') ?? 0;
  const stolen = steal / split.wallMs >= 0.005 ? ` (and ${cores(steal)} taken by the hypervisor)` : '';
  return `machine ${cores(split.groups.get('machine') ?? 0)} cores busy: ${parts.join(', ')}${stolen}`;
}

/** "on a core 58% of the time, ready but waiting for a core 41%" for the busiest renderer's main thread. */
export function formatPageMain(split: CpuSplit): string {
  const m = split.pageMain;
  if (!m) return 'no renderer ran';
  const pct = (ms: number) => `${((ms / split.wallMs) * 100).toFixed(0)}%`;
  return `on a core ${pct(m.onCpuMs)} of the time, ready but waiting for a core ${pct(m.waitingMs)}`;
}
