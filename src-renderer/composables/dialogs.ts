import { reactive, toRaw } from 'vue';

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
  /**
   * OK: acts on the text and closes the dialog. What it throws is said under the field and the
   * dialog stays, with the text as typed, to be corrected or cancelled.
   */
  submit: (value: string) => Promise<void>;
  /** Cancel, Escape or ✕: closes, and the caller gets null. */
  cancel: () => void;
}

export interface TextDialogOptions {
  title: string;
  label: string;
  initial?: string;
  confirmLabel?: string;
  fileName?: boolean;
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
export function textDialog(opts: TextDialogOptions): Promise<string | null> {
  return textDialogThen(opts, (value) => Promise.resolve(value));
}

/**
 * Asks for one line of text and acts on it (`submit`) before the dialog closes: what it returns
 * comes back (null when cancelled); what it throws is said under the field, the dialog staying
 * open with the text as typed. A name the server refuses (taken, not allowed there) is corrected
 * where it was typed, rather than lost with a dialog that closed before the server answered.
 */
export function textDialogThen<T>(opts: TextDialogOptions, submit: (value: string) => Promise<T>): Promise<T | null> {
  return new Promise((resolve) => {
    // Only this request's own dialog is closed: one cancelled while its submit was still under
    // way may have been followed by another.
    const close = () => {
      if (dialogState.current && toRaw(dialogState.current) === request) dialogState.current = null;
    };
    const request: TextRequest = {
      kind: 'text',
      title: opts.title,
      label: opts.label,
      initial: opts.initial ?? '',
      confirmLabel: opts.confirmLabel ?? 'OK',
      fileName: opts.fileName ?? false,
      submit: async (value) => {
        const result = await submit(value);
        close();
        resolve(result);
      },
      cancel: () => {
        close();
        resolve(null);
      },
    };
    dialogState.current = request;
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
