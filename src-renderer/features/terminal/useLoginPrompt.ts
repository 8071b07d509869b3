import { computed } from 'vue';
import { toast } from '../../composables/dialogs.js';
import { asWraithError } from '../../composables/errors.js';
import { useSessionsStore } from '../../stores/sessions.js';

/**
 * The server's login question (keyboard-interactive) a tab's connect waits on, asked over that
 * tab (LoginPromptCard): an SSH tab's own login, or the jump host's on the way to an RDP desktop.
 * It comes over whatever the tab showed meanwhile: a Reconnect asked from a question card keeps
 * that card's phase until it ends.
 */
export function useLoginPrompt(tabKey: string) {
  const sessions = useSessionsStore();
  const loginPrompt = computed(() => sessions.promptOf(tabKey));

  /** Sends the answers (null: the login is given up). A refusal to take them is said in a toast. */
  async function answerLogin(answers: string[] | null): Promise<void> {
    const p = loginPrompt.value;
    if (!p) return;
    try {
      await sessions.answerPrompt(p.promptId, answers);
    } catch (err) {
      toast(asWraithError(err).message, 'error');
    }
  }

  return { loginPrompt, answerLogin };
}
