import { FitAddon } from '@xterm/addon-fit';
import { SearchAddon } from '@xterm/addon-search';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { WebglAddon } from '@xterm/addon-webgl';
import { Terminal } from '@xterm/xterm';
import { type MaybeRefOrGetter, onBeforeUnmount, onMounted, ref, toValue, watch } from 'vue';
import type { Output } from '@common/contract/index.js';
import { terminalFontSize } from '@common/contract/settings.js';
import { FRESH_MODES } from '@common/terminal-modes.js';
import { useSettingsStore } from '../../stores/settings.js';
import { type HostLink, useHost } from '../../transport/index.js';
import { toast } from '../../composables/dialogs.js';
import { DomCursorBlink } from './cursor-blink.js';
import { WEB_LINK_PATTERN, clickOpensLink, openExternal } from './external-links.js';
import { OutputFeeder } from './output-feeder.js';
import { type PasteReason, inPieces, pasteReasons, withoutPasteMarkers } from './paste-lines.js';
import { gpuDrawsWebgl } from './renderer-choice.js';
import { terminalHub } from './terminal-hub.js';
import type { BroadcastReceiver, UserInput } from './broadcast.js';
import { bufferText, registerTerminal } from './terminal-inspect.js';
import { boldIsBright, terminalTheme } from './terminal-themes.js';
import { terminalFontFamily } from './font-family.js';
import { cwdFromOsc7 } from './osc7-cwd.js';
import { type ProgramCopy, readOsc52 } from './osc52.js';

/** What came of a program's OSC 52 copy: on the clipboard, refused by the browser, or over the cap. */
export type ProgramCopyReport = { outcome: 'copied'; text: string } | { outcome: 'refused'; text: string } | { outcome: 'too-large'; bytes: number };

export interface UseTerminalOptions {
  /** Show the session's recent output (terminal.read) before live data: a tab re-opened after a reload. */
  reattach?: MaybeRefOrGetter<boolean>;
  /** Asks the user before a paste that may do more than put text on the line (see PasteReason); resolves true to paste. */
  confirmPaste?: (text: string, reasons: PasteReason[]) => Promise<boolean>;
  /** The first measurement after mount: the size to open the session with. */
  onReady?: (cols: number, rows: number) => void;
  /** Output arrived from the session (called per chunk: keep it cheap). */
  onOutput?: () => void;
  /** The session rang the bell (BEL). */
  onBell?: () => void;
  /** The program set the terminal's title (OSC 0 or 2). */
  onTitle?: (title: string) => void;
  /** The shell said which folder it is in (OSC 7), as a path. */
  onCwd?: (cwd: string) => void;
  /**
   * The user typed a key or pasted (after any confirmation): input broadcast to other terminals.
   * Never what the terminal answers by itself (reports, mouse events).
   */
  onUserInput?: (input: UserInput) => void;
  /**
   * Whether every other terminal a paste here also goes to (a broadcast) takes it with bracketed
   * paste on; a paste is asked about as if this one had it off when one of them does not.
   */
  othersBracketed?: () => boolean;
  /**
   * A program put text on the clipboard with OSC 52 (Settings allow it by default), or tried to:
   * the pane says so. Output read back after a reload copies nothing again.
   */
  onProgramCopy?: (report: ProgramCopyReport) => void;
  /**
   * How an earlier end of the session's program (its connection dropped, its shell exited) reads
   * in output read back (after a reload, or a dropped link): said where it happened, as the view
   * said it live (sessionOver). Without it, output read back says nothing of them.
   */
  describeEnd?: (end: { at: Date; reason: string | null }) => string;
}

/** Where the session's program ended, in a read of its output (terminal.read's `ends`). */
type ProgramEnd = Output<'terminal.read'>['ends'][number];

/**
 * The most a view reads back after a dropped link (terminal.read's limit); the ring buffer holds
 * less by default, so one read covers what it kept.
 */
const CATCH_UP_BYTES = 4 * 1024 * 1024;
const encoder = new TextEncoder();

/**
 * Written in front of output read back after a reload, it tells the view (through its handler)
 * that xterm has reached that output: from there until the write's callback, the answers xterm
 * gives on its own (device attributes, cursor position, colours…) are to queries that were
 * answered when they came, and must not reach the session again — typed at a shell's prompt they
 * showed as `1;2c`. Marked in the bytes rather than from the write call on, because xterm parses
 * later (a task after the call), and keys typed in between must still go. An OSC number no
 * program uses; xterm ignores OSC numbers nobody handles.
 */
const REPLAY_MARK_OSC = 7_303;
const REPLAY_MARK = `\x1b]${REPLAY_MARK_OSC};\x07`;

/**
 * terminal.write takes a string of at most 1,000,000 characters (contract/terminal.ts), and a
 * write sent with notify fails without anyone hearing of it: a larger paste goes in pieces, in
 * order (one link carries them, and the host writes each as it comes).
 */
const WRITE_PIECE_CHARS = 256 * 1024;


/** Whether this outage's lost keystrokes were mentioned (once per outage, not per key). */
let saidNotSent = false;

/**
 * Keys typed while the link to the host is down go nowhere, and the terminal would look as if
 * they did (its echo comes from the remote end). Say so once, outside the terminal's own screen.
 */
function sayNotSent(host: HostLink): void {
  if (saidNotSent) return;
  saidNotSent = true;
  toast('Not sent: the link to the Wraith host is down. It reconnects by itself; type again once the status bar says connected.', 'error');
  const off = host.onOpen(() => {
    saidNotSent = false;
    off();
  });
}

/**
 * Copies `text` with the copy command, for pages without the Clipboard API: it works only within
 * a user's key press or click. The copy event it fires is answered with the text, so no element
 * needs to hold it selected.
 */
function copyByCommand(text: string): boolean {
  let written = false;
  const onCopy = (ev: ClipboardEvent) => {
    if (!ev.clipboardData) return;
    ev.clipboardData.setData('text/plain', text);
    ev.preventDefault();
    written = true;
  };
  document.addEventListener('copy', onCopy, { capture: true });
  try {
    return document.execCommand('copy') && written;
  } catch {
    return false;
  } finally {
    document.removeEventListener('copy', onCopy, { capture: true });
  }
}

/** The cursor blinks again once output has been quiet this long. */
const BLINK_QUIET_MS = 400;

// Highlights every match (and the overview ruler), and makes the addon report result counts.
/** How `find` looks: which way from the match in front, and how the query matches. */
export interface TerminalFindOptions {
  direction: 'next' | 'previous' | 'typed';
  caseSensitive: boolean;
  regex: boolean;
}

const SEARCH_DECORATIONS = {
  matchBackground: '#3a4a6b',
  matchOverviewRuler: '#7aa7ff',
  activeMatchBackground: '#8a6d1f',
  activeMatchColorOverviewRuler: '#e8c872',
};

/**
 * One xterm.js terminal bound to a session's bytes, the same for SSH and local PTYs. Seed 001
 * had SSH convert LF to CRLF; but an SSH tab's shell always runs on a remote pty, whose line
 * discipline turns LF into CRLF as a local one does, and a bare LF reaches us only from a
 * program that turned that off to move the cursor straight down (tmux clearing a pane does):
 * converting it drew such programs wrong. The xterm instance and its addons live here, never
 * in reactive state.
 */
export function useTerminal(sessionId: MaybeRefOrGetter<string | null>, options: UseTerminalOptions = {}) {
  const host = useHost();
  const hub = terminalHub(host);
  const settings = useSettingsStore();

  /** Bind to the element the terminal renders into. */
  const el = ref<HTMLElement | null>(null);
  const searchOpen = ref(false);
  const renderer = ref<'webgl' | 'dom'>('dom');
  const size = ref({ cols: 80, rows: 24 });
  /** The last search: which match is active (1-based) of how many; null before a search. */
  const searchResult = ref<{ index: number; count: number } | null>(null);

  /**
   * Finds `query` in the scrollback: 'next'/'previous' move from the match in front, 'typed'
   * searches as the query is typed (from where the match in front starts, so it grows in place
   * rather than jumping ahead). An empty query clears the highlights; a regular expression that
   * does not parse finds nothing and says so ('invalid') instead of throwing.
   */
  let lastMatching = '';
  const parses = (pattern: string) => {
    try {
      new RegExp(pattern);
      return true;
    } catch {
      return false;
    }
  };
  function forgetMatches(): void {
    search?.clearDecorations();
    searchResult.value = null;
  }
  function find(query: string, how: TerminalFindOptions): boolean | 'invalid' {
    if (!search) return false;
    const invalid = how.regex && !parses(query);
    if (!query || invalid) {
      forgetMatches();
      return invalid ? 'invalid' : false;
    }
    // The addon re-counts and re-highlights only for a new query: it records the options before
    // comparing them (0.16), so a toggle alone would keep the old matches. Forgetting the query does it.
    const matching = `${how.caseSensitive}/${how.regex}`;
    if (matching !== lastMatching) search.clearDecorations();
    lastMatching = matching;
    const options = { caseSensitive: how.caseSensitive, regex: how.regex, decorations: SEARCH_DECORATIONS };
    if (how.direction === 'previous') return search.findPrevious(query, options);
    return search.findNext(query, { ...options, incremental: how.direction === 'typed' });
  }

  /**
   * The link under the mouse (its address, and where the mouse is in client pixels), for the
   * pane's hover tip: an OSC 8 link's text may say anything, the tip shows where it goes.
   */
  const linkHover = ref<{ uri: string; x: number; y: number } | null>(null);
  const links = {
    activate: (ev: MouseEvent, uri: string) => {
      if (clickOpensLink(ev)) openExternal(uri);
    },
    hover: (ev: MouseEvent, uri: string) => (linkHover.value = { uri, x: ev.clientX, y: ev.clientY }),
    leave: () => (linkHover.value = null),
  };

  let term: Terminal | null = null;
  let fit: FitAddon | null = null;
  let search: SearchAddon | null = null;
  let observer: ResizeObserver | null = null;
  let frame = 0;
  let attached: string | null = null;
  let detach: (() => void)[] = [];
  let blinkTimer: ReturnType<typeof setTimeout> | null = null;
  /** Whether the cursor blinks now: the setting, unless output holds it still. */
  let blinking = false;
  let domBlink: DomCursorBlink | null = null;
  const disposers: (() => void)[] = [];
  /** Feeds the attached session's output to xterm; local notices queue behind it. */
  let feeder: OutputFeeder | null = null;
  /** Whether the terminal is on screen (its tab in front): a hidden one's output yields to it (output-feeder.ts). */
  let onScreen = true;
  /** While xterm parses that earlier output: what a program did in it (OSC 52 copies) was done when it came. */
  let parsingReplay = false;
  /** From REPLAY_MARK to the end of the earlier output: xterm's answers to queries in it are dropped. */
  let answersDropped = false;
  /**
   * When the session's program ended, as the host has it, once a read back found that end (the
   * session is over now): sessionOver's notice gives that time rather than the time it is written.
   */
  let overAt: Date | null = null;
  /** A read of the session's output (after a reload, or a dropped link) while it is out: notices wait for it. */
  let reading: Promise<void> | null = null;

  /**
   * The text of a read back, with what the view said where the program ended (a dropped
   * connection, an exited shell) put back there. An end at the very end of a session over now is
   * left out: the pane says that one (sessionOver), with what Enter does now.
   */
  function textWithEnds(r: { text: string; ends: ProgramEnd[]; closed: boolean; truncated: boolean; nextSeq: number }): string {
    let out = '';
    let from = 0;
    for (const end of r.ends) {
      out += r.text.slice(from, end.index);
      from = end.index;
      if (r.closed && !r.truncated && end.seq === r.nextSeq) {
        overAt = new Date(end.at);
        continue;
      }
      const line = options.describeEnd?.({ at: new Date(end.at), reason: end.reason });
      if (line) out += `\r\n\x1b[2m${line}\x1b[0m\r\n`;
    }
    return out + r.text.slice(from);
  }

  function send(data: string | Uint8Array<ArrayBuffer>): void {
    if (!attached) return;
    if (host.current.state !== 'open') {
      sayNotSent(host);
      return;
    }
    // A keystroke needs no answer; a session that is gone says so through its state, not here.
    if (typeof data !== 'string') host.notify('terminal.write', { sessionId: attached, data });
    else for (const piece of inPieces(data, WRITE_PIECE_CHARS)) host.notify('terminal.write', { sessionId: attached, data: piece });
  }

  /**
   * A blinking cursor costs a frame per write under a flood: xterm restarts the blink (and
   * requests an animation frame) on every cursor move, and each extra frame is parsing time lost
   * (in headless Chromium a frame costs ~80 ms, which halved the tab's throughput). So the
   * cursor holds still while output streams and blinks again once it has been quiet.
   */
  function holdBlink(t: Terminal): void {
    if (blinkTimer) clearTimeout(blinkTimer);
    else if (blinking) setBlink(t, false);
    else return; // not blinking, and not held by us
    blinkTimer = setTimeout(() => {
      blinkTimer = null;
      if (term === t) setBlink(t, settings.values['terminal.cursorBlink']);
    }, BLINK_QUIET_MS);
  }

  /** xterm blinks the WebGL renderer's cursor; the DOM renderer's blinks from our timer (cursor-blink.ts). */
  function setBlink(t: Terminal, on: boolean): void {
    blinking = on;
    const dom = renderer.value === 'dom' && domBlink !== null;
    if (t.options.cursorBlink !== (on && !dom)) t.options.cursorBlink = on && !dom;
    if (domBlink) domBlink.enabled = on && dom;
  }

  function attach(id: string): void {
    const t = term;
    if (!t) return;
    attached = id;
    let live = true;
    // While recent output is fetched, live chunks wait so nothing is shown twice or out of order.
    let backlog: { data: Uint8Array; seq: number; acked: boolean }[] | null = toValue(options.reattach) ? [] : null;
    let shownUpTo = 0;
    /** Where the output this view has had ends (the seq of its next byte), once known. */
    let expected: number | null = null;
    // Credit goes back only once xterm has parsed the bytes: that is what bounds memory.
    const output = new OutputFeeder({ write: (data, parsed) => t.write(data, parsed) }, (bytes) => hub.ack(id, bytes));
    output.background = !onScreen;
    feeder = output;

    const show = (data: Uint8Array, seq: number, acked: boolean) => {
      if (expected !== null && seq > expected && !backlog) {
        // Output the host sent never came (the link dropped, or it shed events for a slow
        // link): fetch it from the ring buffer before showing this.
        backlog = [{ data, seq, acked }];
        void catchUp(expected);
        return;
      }
      expected = Math.max(expected ?? 0, seq + data.byteLength);
      let bytes = data;
      if (seq < shownUpTo) bytes = data.subarray(Math.min(data.byteLength, shownUpTo - seq));
      if (bytes.byteLength > 0) {
        holdBlink(t);
        options.onOutput?.();
        overAt = null; // the program runs again: an end read back is history
      }
      output.push(bytes, acked ? 0 : data.byteLength);
    };

    /** Shows what arrived while a read was out, in order; a chunk beyond a new gap starts another read. */
    const releaseBacklog = () => {
      const queued = backlog ?? [];
      backlog = null;
      if (live) for (const c of queued) show(c.data, c.seq, c.acked);
    };

    /**
     * The output from `from` on, read from the session's ring buffer and shown ahead of what
     * arrives meanwhile. The host counted the bytes that never came as owed: they are credited
     * once shown, or its flow control would hold the session paused until its stall timer.
     */
    const catchUp = (from: number) => {
      backlog ??= [];
      const read = readSince(from).finally(() => {
        if (reading === read) reading = null;
      });
      reading = read;
      return read;
    };
    /**
     * The view has parsed everything before `from`, so it is in the modes in effect there, and the
     * bytes read cross any later change as they are parsed: written as they are. Only when the
     * ring buffer no longer holds the start (`dropped`) are the changes in between lost: then the
     * terminal's modes go back to a fresh terminal's (FRESH_MODES) and to those where the read
     * starts (`restore`, which is relative to a fresh terminal). Restore with nothing lost would
     * not be a no-op: its scroll region is set with the cursor saved (ESC 7), over what the
     * program saved itself.
     */
    const readSince = async (from: number) => {
      try {
        const r = await host.call('terminal.read', { sessionId: id, sinceSeq: from, maxBytes: CATCH_UP_BYTES });
        if (!live) return;
        // Bytes from the first chunk that did arrive on are credited as each such chunk is shown.
        const lostUntil = Math.min(backlog?.[0]?.seq ?? r.nextSeq, r.nextSeq);
        const lost = r.dropped > 0 ? `${FRESH_MODES}\x1b[2m[${r.dropped} bytes of output from while the link was down are no longer kept]\x1b[0m\r\n${r.restore}` : '';
        output.push(encoder.encode(lost + textWithEnds(r)), Math.max(0, lostUntil - from));
        shownUpTo = Math.max(shownUpTo, r.nextSeq);
        expected = Math.max(expected ?? 0, r.nextSeq);
      } catch {
        // The link is down again: show what came as it is, and catch up after the next reconnect.
        expected = null;
      } finally {
        releaseBacklog();
      }
    };

    const release = hub.claim(id, (data, seq, acked) => {
      if (backlog) backlog.push({ data, seq, acked });
      else show(data, seq, acked);
    });
    hub.arm(id);
    const unregister = registerTerminal(id, t, () => output.background);
    // Events sent while the link to the host was down are lost: catch up from the ring buffer.
    const offOpen = host.onOpen((reconnected) => {
      if (reconnected && live && expected !== null && !backlog) void catchUp(expected);
    });
    detach = [release, unregister, offOpen, () => output.dispose(), () => (feeder = null), () => (live = false)];

    if (backlog) {
      const read: Promise<void> = host
        .call('terminal.read', { sessionId: id, maxBytes: 256 * 1024 })
        .then((r) => {
          if (!live) return;
          const note = r.dropped > 0 || r.seq > 0 ? '\x1b[2m[earlier output not kept]\x1b[0m\r\n' : '';
          // The modes a program set before the bytes read back (vim's alternate screen and mouse
          // reports): the screen it draws on must be the one it chose, before it is drawn.
          // One write: its callback comes once xterm has parsed all of it, before anything after.
          parsingReplay = true;
          t.write(REPLAY_MARK + note + r.restore + textWithEnds(r), () => {
            parsingReplay = false;
            answersDropped = false;
          });
          shownUpTo = r.nextSeq;
          expected = Math.max(expected ?? 0, r.nextSeq);
        })
        .catch(() => undefined)
        .finally(() => {
          if (reading === read) reading = null;
          releaseBacklog();
        });
      reading = read;
    }
    host.call('terminal.resize', { sessionId: id, cols: t.cols, rows: t.rows }).catch(() => undefined);
  }

  function detachSession(): void {
    for (const d of detach) d();
    detach = [];
    attached = null;
  }

  function refit(): void {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => {
      if (!term || !fit || !el.value || el.value.offsetParent === null) return;
      fit.fit();
    });
  }

  /**
   * Ctrl+= / Ctrl+- / Ctrl+0, as in browsers, VS Code and Tabby: steps on top of the size chosen
   * in Settings, and Ctrl+0 back to that size. The steps are a setting of their own (every
   * terminal follows, a restart keeps them); terminal.fontSize is only ever set by Settings.
   */
  function zoom(step: 1 | -1 | 0): void {
    const base = settings.values['terminal.fontSize'];
    // From the size drawn, so that steps past 6 or 48 px do not pile up unseen.
    const next = step === 0 ? 0 : Math.max(6, Math.min(48, terminalFontSize(settings.values) + step)) - base;
    if (next !== settings.values['terminal.fontZoom']) void settings.set({ 'terminal.fontZoom': next });
  }

  /**
   * Puts the selection on the clipboard. Without the Clipboard API (a page served over plain http
   * from another machine is not a secure context) the older copy command still works within the
   * key press or click that asked; if that fails too, a toast says so rather than nothing.
   */
  async function copySelection(): Promise<void> {
    const text = term?.getSelection();
    if (!text) return;
    const copied = navigator.clipboard ? await navigator.clipboard.writeText(text).then(() => true, () => false) : copyByCommand(text);
    if (!copied) toast('Not copied: the browser did not let Wraith write to the clipboard.', 'error');
  }

  async function paste(clipboard: string): Promise<void> {
    const text = withoutPasteMarkers(clipboard);
    if (!term || !text) return;
    // Control characters are asked about whatever the setting: it is about lines, and they can do more.
    const bracketed = term.modes.bracketedPasteMode && (options.othersBracketed?.() ?? true);
    const reasons = pasteReasons(text, bracketed).filter((r) => r === 'controls' || settings.values['terminal.confirmMultilinePaste']);
    if (reasons.length > 0 && options.confirmPaste) {
      const ok = await options.confirmPaste(text, reasons);
      term?.focus();
      if (!ok) return;
    }
    // xterm wraps it in ESC[200~ … ESC[201~ when the program asked for bracketed paste.
    term?.paste(text);
    options.onUserInput?.({ kind: 'paste', text });
  }

  /** Puts a program's OSC 52 text on the clipboard (no fallback: the copy command needs a user's key press or click). */
  async function copyForProgram(copy: ProgramCopy): Promise<void> {
    if (copy.kind === 'none') return;
    if (copy.kind === 'too-large') {
      options.onProgramCopy?.({ outcome: 'too-large', bytes: copy.bytes });
      return;
    }
    const copied = navigator.clipboard ? await navigator.clipboard.writeText(copy.text).then(() => true, () => false) : false;
    options.onProgramCopy?.(copied ? { outcome: 'copied', text: copy.text } : { outcome: 'refused', text: copy.text });
  }

  /**
   * Copy-on-select copies what the user selected with the mouse, once the button is up (the
   * selection is then whole). Selections made by code — Find selects each match, and does again
   * as output comes — are not the user's, and must not replace the clipboard.
   */
  let mouseSelecting = false;
  function copyOnSelect(): void {
    if (settings.values['terminal.copyOnSelect'] && term?.hasSelection()) void copySelection();
  }

  function keyHandler(ev: KeyboardEvent): boolean {
    if (ev.type !== 'keydown') return true;
    const ctrl = ev.ctrlKey || ev.metaKey;
    const key = ev.key.toLowerCase();
    if (ctrl && ev.shiftKey && key === 'f') {
      ev.preventDefault();
      searchOpen.value = true;
      return false;
    }
    if (ctrl && ev.shiftKey && key === 'c') {
      ev.preventDefault();
      void copySelection();
      return false;
    }
    if (ctrl && ev.shiftKey && key === 'v') return false; // the browser's paste event follows
    if (ctrl && !ev.altKey && (key === '=' || key === '+')) {
      ev.preventDefault();
      zoom(1);
      return false;
    }
    if (ctrl && !ev.altKey && !ev.shiftKey && (key === '-' || key === '_')) {
      ev.preventDefault();
      zoom(-1);
      return false;
    }
    if (ctrl && !ev.altKey && !ev.shiftKey && key === '0') {
      ev.preventDefault();
      zoom(0);
      return false;
    }
    // xterm.js sends nothing for Ctrl+/; xterm and VTE send ^_ (undo in readline and emacs).
    if (ev.ctrlKey && !ev.metaKey && !ev.altKey && !ev.shiftKey && ev.key === '/') {
      ev.preventDefault();
      term?.input('\x1f');
      return false;
    }
    return true;
  }

  onMounted(() => {
    const container = el.value;
    if (!container) return;
    const s = settings.values;
    const t = new Terminal({
      scrollback: s['terminal.scrollback'],
      fontSize: terminalFontSize(s),
      fontFamily: terminalFontFamily(s['terminal.fontFamily']),
      lineHeight: s['terminal.lineHeight'],
      theme: terminalTheme(s['terminal.theme']),
      drawBoldTextInBrightColors: boldIsBright(s['terminal.theme']),
      cursorBlink: false, // set by setBlink once the renderer is known
      cursorStyle: s['terminal.cursorStyle'],
      screenReaderMode: s['terminal.screenReaderMode'],
      allowProposedApi: true, // unicode11 uses the proposed unicode API
      macOptionIsMeta: true,
      // OSC 8 hyperlinks open as plain links do: xterm's own handler asks with a confirm() that
      // blocks the page and then opens the window itself, past the app's opener.
      linkHandler: links,
    });
    term = t;
    fit = new FitAddon();
    search = new SearchAddon();
    t.loadAddon(fit);
    t.loadAddon(search);
    const onResults = search.onDidChangeResults(({ resultIndex, resultCount }) => {
      searchResult.value = { index: resultIndex + 1, count: resultCount };
    });
    disposers.push(() => onResults.dispose());
    t.loadAddon(new WebLinksAddon(links.activate, { urlRegex: WEB_LINK_PATTERN, hover: links.hover, leave: links.leave }));
    const unicode = new Unicode11Addon();
    t.loadAddon(unicode);
    t.unicode.activeVersion = '11';
    t.open(container);
    const choice = settings.values['terminal.renderer'];
    if (choice === 'webgl' || (choice === 'auto' && gpuDrawsWebgl())) {
      try {
        const webgl = new WebglAddon();
        webgl.onContextLoss(() => {
          // The GPU went away (driver reset, too many contexts): the DOM renderer takes over.
          webgl.dispose();
          renderer.value = 'dom';
          setBlink(t, blinking);
        });
        t.loadAddon(webgl);
        renderer.value = 'webgl';
      } catch {
        renderer.value = 'dom';
      }
    } else {
      renderer.value = 'dom';
    }
    domBlink = new DomCursorBlink(t, container);
    setBlink(t, s['terminal.cursorBlink']);
    t.attachCustomKeyEventHandler(keyHandler);

    const subscriptions = [
      // What xterm answers by itself comes here too: not its answers to output read back (REPLAY_MARK).
      t.onData((d) => {
        if (!answersDropped) send(d);
      }),
      // onKey fires for typed keys only (onData also carries the terminal's own answers).
      t.onKey(({ key }) => options.onUserInput?.({ kind: 'key', data: key })),
      // Mouse reports in X10 mode are raw bytes, not UTF-8 text.
      t.onBinary((d) => send(Uint8Array.from(d, (c) => c.charCodeAt(0) & 0xff))),
      t.onResize(({ cols, rows }) => {
        size.value = { cols, rows };
        if (attached) host.call('terminal.resize', { sessionId: attached, cols, rows }).catch(() => undefined);
      }),
      t.onBell(() => options.onBell?.()),
      t.onTitleChange((title) => options.onTitle?.(title)),
      // xterm keeps no folder of its own; false lets any other handler of OSC 7 see it too.
      t.parser.registerOscHandler(7, (report) => {
        const cwd = cwdFromOsc7(report);
        if (cwd) options.onCwd?.(cwd);
        return false;
      }),
      t.parser.registerOscHandler(REPLAY_MARK_OSC, () => {
        answersDropped = parsingReplay;
        return true;
      }),
      // Handled whatever it asks: a query for the clipboard's content is never answered.
      t.parser.registerOscHandler(52, (payload) => {
        if (!parsingReplay && settings.values['terminal.osc52Copy']) void copyForProgram(readOsc52(payload));
        return true;
      }),
    ];
    disposers.push(() => subscriptions.forEach((sub) => sub.dispose()));

    const onMouseDown = (ev: MouseEvent) => (mouseSelecting = ev.button === 0);
    // On the window, bubbling: a drag that selects may end outside the terminal, and xterm
    // settles the selection in its own mouseup listener on the document, before this one.
    const onMouseUp = () => {
      if (!mouseSelecting) return;
      mouseSelecting = false;
      copyOnSelect();
    };
    container.addEventListener('mousedown', onMouseDown, { capture: true });
    window.addEventListener('mouseup', onMouseUp);
    disposers.push(() => {
      container.removeEventListener('mousedown', onMouseDown, { capture: true });
      window.removeEventListener('mouseup', onMouseUp);
    });

    const onPaste = (ev: ClipboardEvent) => {
      ev.preventDefault();
      ev.stopImmediatePropagation();
      void paste(ev.clipboardData?.getData('text/plain') ?? '');
    };
    container.addEventListener('paste', onPaste, { capture: true });
    disposers.push(() => container.removeEventListener('paste', onPaste, { capture: true }));

    observer = new ResizeObserver(refit);
    observer.observe(container);
    // A tab that is not in front is display:none, which an IntersectionObserver reports as not intersecting.
    const visibility = new IntersectionObserver((entries) => {
      const entry = entries[entries.length - 1];
      if (!entry) return;
      onScreen = entry.isIntersecting;
      if (feeder) feeder.background = !onScreen;
    });
    visibility.observe(container);
    disposers.push(() => visibility.disconnect());
    if (container.offsetParent !== null) fit.fit();
    size.value = { cols: t.cols, rows: t.rows };
    options.onReady?.(t.cols, t.rows);

    const id = toValue(sessionId);
    if (id) attach(id);
  });

  watch(
    () => toValue(sessionId),
    (id) => {
      if (!term || id === attached) return;
      detachSession();
      if (id) attach(id);
    },
  );

  watch(
    () =>
      [terminalFontSize(settings.values), settings.values['terminal.fontFamily'], settings.values['terminal.lineHeight'], settings.values['terminal.scrollback']] as const,
    ([fontSize, fontFamily, lineHeight, scrollback]) => {
      if (!term) return;
      term.options.fontSize = fontSize;
      term.options.fontFamily = terminalFontFamily(fontFamily);
      term.options.lineHeight = lineHeight;
      term.options.scrollback = scrollback;
      refit();
    },
  );

  watch(
    () => [settings.values['terminal.theme'], settings.values['terminal.cursorStyle'], settings.values['terminal.cursorBlink']] as const,
    ([theme, cursorStyle, cursorBlink]) => {
      if (!term) return;
      term.options.theme = terminalTheme(theme);
      term.options.drawBoldTextInBrightColors = boldIsBright(theme);
      term.options.cursorStyle = cursorStyle;
      // A blink held during output comes back as the setting says (holdBlink reads it).
      if (!blinkTimer) setBlink(term, cursorBlink);
    },
  );

  watch(
    () => settings.values['terminal.screenReaderMode'],
    (on) => {
      if (term) term.options.screenReaderMode = on;
    },
  );

  onBeforeUnmount(() => {
    cancelAnimationFrame(frame);
    if (blinkTimer) clearTimeout(blinkTimer);
    domBlink?.dispose();
    observer?.disconnect();
    detachSession();
    for (const d of disposers) d();
    term?.dispose();
    term = null;
  });

  return {
    el,
    linkHover,
    searchOpen,
    renderer,
    size,
    focus: () => term?.focus(),
    refit,
    /**
     * The session's program is gone (it ended, or its connection dropped): puts the terminal's
     * modes back as a fresh terminal has them (FRESH_MODES) and writes a local notice, dimmed,
     * saying when (`say`: the notice, given the time). Both go after the output already received,
     * which the feeder may still be writing, or a view may still be reading back (after a reload
     * or a dropped link); a view that read the end back takes the host's time of it.
     */
    sessionOver: (say: (at: Date) => string) => {
      const write = () => {
        const bytes = encoder.encode(`${FRESH_MODES}\r\n\x1b[2m${say(overAt ?? new Date())}\x1b[0m\r\n`);
        overAt = null;
        if (feeder) feeder.push(bytes, 0);
        else term?.write(bytes);
      };
      // The earlier output (a full-screen program's modes with it) is still being read: the reset goes after it.
      if (reading) void reading.then(write);
      else write();
    },
    searchResult,
    find,
    closeSearch: () => {
      forgetMatches();
      searchOpen.value = false;
      term?.focus();
    },
    measure: () => ({ cols: term?.cols ?? 80, rows: term?.rows ?? 24 }),
    hasSelection: () => term?.hasSelection() ?? false,
    /**
     * The session's output as text: the scrollback and screen of the normal buffer, so a full-screen
     * program (vim, less, htop) in the alternate screen does not replace the shell's history.
     */
    outputText: () => (term ? bufferText(term, 0, term.buffer.normal) : ''),
    /** True while the program in the terminal asked for mouse events (mc, htop, vim with mouse=a). */
    programWantsMouse: () => (term?.modes.mouseTrackingMode ?? 'none') !== 'none',
    copySelection,
    /** Pastes the clipboard's text as Ctrl+Shift+V does (bracketed, multi-line confirmation). */
    pasteClipboard: async (): Promise<boolean> => {
      const text = await navigator.clipboard?.readText().catch(() => null);
      if (text === null || text === undefined) return false;
      await paste(text);
      return true;
    },
    /** Pastes text as a paste from the clipboard would be (bracketed, multi-line confirmation). */
    pasteText: (text: string) => paste(text),
    /** Selects everything (the menu's Select all): the user's selection, so copy-on-select copies it. */
    selectAll: () => {
      term?.selectAll();
      copyOnSelect();
    },
    /** Drops the scrollback and the screen above the cursor line; the session is not touched. */
    clear: () => term?.clear(),
    /** Input broadcast from another terminal: keys as they were encoded there, pastes wrapped as this terminal's program asked. */
    receiver: {
      key: (data: string) => send(data),
      paste: (text: string) => term?.paste(text),
      bracketedPaste: () => term?.modes.bracketedPasteMode ?? false,
    } satisfies BroadcastReceiver,
  };
}
