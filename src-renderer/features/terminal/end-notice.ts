/**
 * The line a terminal shows where its session's program ended: its connection dropped, or its
 * shell exited. Said when it happens, and again where it happened in output read back after a
 * reload, with the time (the tab may sit for days), and, for the end in effect, what Enter does.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const p2 = (n: number) => String(n).padStart(2, '0');

/** "19:02:13" on the day of `now`, else "Nov 27 19:02:13" (local time). */
export function formatEndTime(at: Date, now = new Date()): string {
  const time = `${p2(at.getHours())}:${p2(at.getMinutes())}:${p2(at.getSeconds())}`;
  const sameDay = at.getFullYear() === now.getFullYear() && at.getMonth() === now.getMonth() && at.getDate() === now.getDate();
  return sameDay ? time : `${MONTHS[at.getMonth()] ?? ''} ${at.getDate()} ${time}`;
}

/**
 * "— Disconnected at 19:02:13: Connection to web01 lost. Press Enter to reconnect." — or, for a
 * session that ended (a local shell exited, a session closed), "— Ended at …". `again`: what
 * Enter does now, with its leading space; '' for an end in the past.
 */
export function endNotice(how: 'disconnected' | 'ended', reason: string | null, at: Date, again = '', now = new Date()): string {
  const when = formatEndTime(at, now);
  if (how === 'disconnected') return `— Disconnected at ${when}${reason ? `: ${reason}` : '.'}${again}`;
  return `— ${reason ? `Ended at ${when}: ${reason}` : `Session ended at ${when}.`}${again}`;
}
