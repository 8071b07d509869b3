import { reactive } from 'vue';

export interface ConfirmRequest {
  kind: 'confirm';
  title: string;
  message: string;
  /** Shown in a monospace block under the message (e.g. the text about to be pasted). */
  detail?: string;
  confirmLabel: string;
  danger: boolean;
  resolve: (ok: boolean) => void;
}

export interface TextRequest {
  kind: 'text';
  title: string;
  label: string;
  initial: string;
  confirmLabel: string;
  /** A file name: kept exactly as typed (spaces are part of a name), up to a path's length. */
  fileName: boolean;
  resolve: (value: string | null) => void;
}

/** The one small dialog open now (confirmations and one-line questions), rendered by DialogHost. */
export const dialogState = reactive<{ current: ConfirmRequest | TextRequest | null }>({ current: null });

export function confirmDialog(opts: { title: string; message: string; detail?: string; confirmLabel?: string; danger?: boolean }): Promise<boolean> {
  return new Promise((resolve) => {
    dialogState.current = {
      kind: 'confirm',
      title: opts.title,
      message: opts.message,
      ...(opts.detail !== undefined ? { detail: opts.detail } : {}),
      confirmLabel: opts.confirmLabel ?? 'OK',
      danger: opts.danger ?? false,
      resolve: (ok) => {
        dialogState.current = null;
        resolve(ok);
      },
    };
  });
}

/**
 * Asks for one line of text; null when cancelled. Titles and labels are trimmed and at most 200
 * characters; with `fileName` the text comes back as typed (blank is still refused), up to 4096
 * characters (PATH_MAX: the server says when a name is too long), with the part before the
 * extension of `initial` selected, as file managers do for a rename.
 */
export function textDialog(opts: { title: string; label: string; initial?: string; confirmLabel?: string; fileName?: boolean }): Promise<string | null> {
  return new Promise((resolve) => {
    dialogState.current = {
      kind: 'text',
      title: opts.title,
      label: opts.label,
      initial: opts.initial ?? '',
      confirmLabel: opts.confirmLabel ?? 'OK',
      fileName: opts.fileName ?? false,
      resolve: (value) => {
        dialogState.current = null;
        resolve(value);
      },
    };
  });
}

/** Short messages at the bottom right ("Imported 4 connections"). */
export const toasts = reactive<{ items: { id: number; text: string; tone: 'info' | 'error' }[] }>({ items: [] });
let toastId = 1;

export function toast(text: string, tone: 'info' | 'error' = 'info'): void {
  const id = toastId++;
  toasts.items.push({ id, text, tone });
  setTimeout(() => {
    const i = toasts.items.findIndex((t) => t.id === id);
    if (i >= 0) toasts.items.splice(i, 1);
  }, tone === 'error' ? 8000 : 4000);
}
