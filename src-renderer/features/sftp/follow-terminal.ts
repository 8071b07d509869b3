import { type Ref, onBeforeUnmount, watch } from 'vue';
import type { HostLink } from '../../transport/index.js';
import { CommandEndDetector } from '../terminal/command-end.js';
import { showsAlternateScreen } from '../terminal/terminal-inspect.js';

export interface FollowTerminalOptions {
  host: HostLink;
  /** The SSH session whose shell is followed; null while it is not connected. */
  sessionId: Readonly<Ref<string | null>>;
  /** On while the panel follows the terminal. */
  enabled: Readonly<Ref<boolean>>;
  /** The shell is in a folder other than the last one seen (and on every start of following). */
  onFolder: (cwd: string) => void;
  /** The host cannot tell where the shell is (no OSC 7, no /proc): following cannot work. */
  onUnknown: () => void;
}

/**
 * "Follow the terminal's folder" (MobaXterm users know it): while on, the panel lists the folder
 * the tab's shell is in after every command, whether the Commander or the XO typed it. The host's
 * `terminal.cwd` answers from OSC 7 when the shell reports it, else from the server's /proc (one
 * small exec once the shell is known). Only a change of the shell's folder moves the panel, so a
 * folder browsed by hand stays until the shell moves.
 */
export function useFollowTerminal(o: FollowTerminalOptions): void {
  let last: string | null = null;
  let asking = false;
  let askAgain = false;

  async function ask(): Promise<void> {
    const sid = o.sessionId.value;
    if (!sid || !o.enabled.value) return;
    if (asking) {
      askAgain = true;
      return;
    }
    asking = true;
    try {
      const { cwd } = await o.host.call('terminal.cwd', { sessionId: sid });
      if (sid !== o.sessionId.value || !o.enabled.value) return;
      if (!cwd) o.onUnknown();
      else if (cwd !== last) {
        last = cwd;
        o.onFolder(cwd);
      }
    } catch {
      // The session closed meanwhile, or the link dropped: the next command asks again.
    } finally {
      asking = false;
      if (askAgain) {
        askAgain = false;
        void ask();
      }
    }
  }

  // A full-screen program on the alternate screen (vim, less, htop) redrawing is not a prompt coming back.
  const commands = new CommandEndDetector(() => {
    const sid = o.sessionId.value;
    if (sid && !showsAlternateScreen(sid)) void ask();
  });
  const off = o.host.on('terminal.data', ({ sessionId, data }) => {
    if (o.enabled.value && sessionId === o.sessionId.value) commands.feed(data);
  });

  // Turned on, or the session (re)connected with it on: where is the shell now?
  watch(
    [o.enabled, o.sessionId],
    ([on]) => {
      commands.reset();
      last = null;
      if (on) void ask();
    },
    { immediate: true },
  );

  onBeforeUnmount(() => {
    off();
    commands.reset();
  });
}
