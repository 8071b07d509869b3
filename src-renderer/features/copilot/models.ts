/** Models offered in the XO's model selector (any other id typed in settings is kept). */
export const MODELS: { id: string; label: string }[] = [
  { id: 'claude-sonnet-5-5', label: 'Claude Sonnet 5.5' },
  { id: 'claude-opus-5-5', label: 'Claude Opus 5.5' },
  { id: 'claude-haiku-5-5', label: 'Claude Haiku 5.5' },
  { id: 'claude-sonnet-4-6', label: 'Claude Sonnet 4.6' },
];

/** Buttons of the quick-commands bar: a prompt the XO gets as if typed. */
export const QUICK_COMMANDS: { label: string; prompt: string }[] = [
  { label: 'Status', prompt: 'Give me a short status of the focused session: host, uptime, load, disk and memory.' },
  { label: 'Explain output', prompt: 'Read the last output of the focused session and explain it; point out errors.' },
  { label: 'Disk usage', prompt: 'Find what uses the most disk space on the focused host.' },
  { label: 'Screenshot', prompt: 'Take a screenshot of the focused desktop and describe what is on screen.' },
];
