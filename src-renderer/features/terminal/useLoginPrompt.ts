import { computed } from 'vue';
import { toast } from '../../composables/dialogs.js';
import { asWraithError } from '../../composables/errors.js';
import { type SshPrompt, useSessionsStore } from '../../stores/sessions.js';

/**
 * The server's login question (keyboard-interactive) a tab's connect waits on, asked over that
 * tab (LoginPromptCard): an SSH tab's own login, or the jump host's on the way to an RDP desktop.
 * It comes over whatever the tab showed meanwhile: a Reconnect asked from a question card keeps
 * that card's phase until it ends.
 */
export function useLoginPrompt(tabKey: string) {
  const sessions = useSessionsStore();
  const loginPrompt = computed(() => sessions.promptOf(tabKey));

  /** Sends the answers to the question shown (null: the login is given up). */
  const answerLogin = (answers: string[] | null) => sendLoginAnswers(loginPrompt.value, answers);

  return { loginPrompt, answerLogin };
}

/**
 * Sends `answers` to login question `p` (null: the login is given up), from the tab's card or the
 * window's dialog. A refusal to take them (the question withdrawn meanwhile) is said in a toast.
 */
export async function sendLoginAnswers(p: SshPrompt | null, answers: string[] | null): Promise<void> {
  if (!p) return;
  try {
    await useSessionsStore().answerPrompt(p.promptId, answers);
  } catch (err) {
    toast(asWraithError(err).message, 'error');
  }
}
