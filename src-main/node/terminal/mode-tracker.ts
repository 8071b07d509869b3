/**
 * The terminal modes a program sets that a replay of its output has to put back first, because
 * the sequences that set them may be older than the bytes replayed: a view that reads the last
 * 256 KiB after a reload, while vim (started many screens ago) still runs, would otherwise draw
 * vim's screen on the normal one, send no mouse reports, and leave vim's text behind when it quits.
 *
 * Tracked, as xterm.js (the view) applies them:
 * - the alternate screen (DECSET 47, 1047, 1049);
 * - mouse tracking (9, 1000, 1002, 1003: one at a time, any reset turns it off) and its encoding
 *   (1005, 1006, 1015, 1016: one at a time, a reset only undoes the one it names, as in xterm);
 * - application cursor keys (1), autowrap (7), cursor visibility (25), application keypad (66,
 *   ESC = / ESC >), focus reports (1004), bracketed paste (2004);
 * - the scroll region (DECSTBM, CSI t;b r), one per screen: leaving the alternate screen and a
 *   resize reset it, as xterm.js does;
 * - DECSTR (CSI ! p) resets the modes it resets in xterm.js (not the screen, not the mouse), RIS
 *   (ESC c) every one.
 *
 * The state is recorded where it changes (the seq just past the sequence), so `restoreAt(seq)` is
 * exact for any seq a read may start at. This runs on every byte of output: the scan jumps from ESC
 * to ESC with a native search, and a stream without ESC costs one search per chunk.
 */

const ESC = 0x1b;

// Bits of a state's flags; each set bit is a mode away from its default.
const ALT_SCREEN = 1 << 0;
const APP_CURSOR_KEYS = 1 << 1;
const NO_AUTOWRAP = 1 << 2;
const CURSOR_HIDDEN = 1 << 3;
const APP_KEYPAD = 1 << 4;
const FOCUS_REPORTS = 1 << 5;
const BRACKETED_PASTE = 1 << 6;
/** What DECSTR (soft reset) puts back in xterm.js. */
const SOFT_RESET_FLAGS = APP_CURSOR_KEYS | NO_AUTOWRAP | CURSOR_HIDDEN | APP_KEYPAD | FOCUS_REPORTS | BRACKETED_PASTE;
/** Three bits each: 0 = off, else the index + 1 of the mode in MOUSE_PROTOCOLS / MOUSE_ENCODINGS. */
const MOUSE_SHIFT = 7;
const ENCODING_SHIFT = 10;
const MOUSE_PROTOCOLS = [9, 1000, 1002, 1003];
const MOUSE_ENCODINGS = [1005, 1006, 1015, 1016];

/** Plain on/off DEC private modes: the flag, and whether DECSET (h) sets it (else DECRST does). */
const SIMPLE_MODES = new Map<number, readonly [flag: number, setBySet: boolean]>([
  [1, [APP_CURSOR_KEYS, true]],
  [7, [NO_AUTOWRAP, false]],
  [25, [CURSOR_HIDDEN, false]],
  [66, [APP_KEYPAD, true]],
  [1004, [FOCUS_REPORTS, true]],
  [2004, [BRACKETED_PASTE, true]],
]);

/**
 * A scroll region as (top, bottom) rows, 1-based, packed in 20 bits; 0 is the whole screen. Rows
 * are at most 1000 (terminal.resize), so 10 bits each hold any region a terminal keeps.
 */
const REGION_BITS = 1024 * 1024;
const packRegion = (top: number, bottom: number) => Math.min(top, 1023) * 1024 + Math.min(bottom, 1023);

/** An unfinished sequence longer than this is no sequence a terminal would act on: it is dropped. */
const MAX_CARRY = 256;
/** xterm.js reads at most this many parameters of a CSI sequence. */
const MAX_PARAMS = 32;
/**
 * Changes kept at most. A full-screen program records a few per screen it draws (vim hides the
 * cursor while it draws), a ring buffer of 1 MiB holds some hundreds; past this the oldest go, and
 * a read from before the oldest kept starts in that one's state.
 */
const MAX_CHANGES = 4096;
/** parse() found the chunk's end before the sequence's. */
const INCOMPLETE = -1;

export class TerminalModeTracker {
  private flags = 0;
  /** The normal screen's region (high 20 bits) and the alternate screen's (low 20 bits). */
  private regions = 0;
  private rows: number;
  /** Seq of the next byte fed. */
  private end = 0;
  /** An unfinished sequence at the end of the last chunk (starts with ESC), or null. */
  private carry: Buffer | null = null;
  /** The parameters of the sequence being read (readParams); fixed, so reading one allocates nothing. */
  private readonly params = new Array<number>(MAX_PARAMS).fill(0);
  // The changes, oldest first, from `head` on: from seqs[i] on, the state was flags[i], regions[i].
  private seqs: number[] = [0];
  private flagsAt: number[] = [0];
  private regionsAt: number[] = [0];
  private head = 0;

  /** `capacity`: the ring buffer's; what lies further back than that is never read again. */
  constructor(
    private readonly capacity: number,
    rows: number,
  ) {
    this.rows = rows;
  }

  /** Follows one chunk of output whose first byte is at `seq` (chunks come in order, without gaps). */
  feed(chunk: Uint8Array, seq: number): void {
    this.end = seq + chunk.length;
    let at = 0;
    if (this.carry) {
      // The unfinished sequence with the start of this chunk: enough to finish any it could be.
      const carried = this.carry;
      this.carry = null;
      const joined = Buffer.concat([carried, chunk.subarray(0, MAX_CARRY)]);
      const next = this.parse(joined, 0, seq - carried.length);
      if (next !== INCOMPLETE) at = Math.max(0, next - carried.length);
      else if (joined.length === carried.length + chunk.length && joined.length <= MAX_CARRY) {
        this.carry = joined;
        return;
      }
      // Else too long to be a sequence: dropped. It holds no ESC, so scanning from 0 finds the next one.
    }
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const length = bytes.length;
    for (let i = bytes.indexOf(ESC, at); i !== -1; i = nextEsc(bytes, i)) {
      // Fast path for what most sequences are, colours and cursor moves: a CSI of parameters
      // only, ending in a byte that is not h, l, r or p, changes nothing here.
      if (bytes[i + 1] === 0x5b) {
        let j = i + 2;
        let x = 0;
        while (j < length && (x = bytes[j] ?? 0) >= 0x30 && x <= 0x3f) j++;
        if (j < length && x >= 0x40 && x <= 0x7e && x !== 0x68 && x !== 0x6c && x !== 0x72 && x !== 0x70) {
          i = j + 1;
          continue;
        }
      }
      const next = this.parse(bytes, i, seq);
      if (next === INCOMPLETE) {
        if (bytes.length - i <= MAX_CARRY) this.carry = Buffer.from(bytes.subarray(i));
        return;
      }
      i = next;
    }
  }

  /** The terminal was resized (terminal.resize): xterm.js then makes both screens' scroll regions whole again. */
  resized(rows: number): void {
    this.rows = rows;
    this.change(this.flags, 0, this.end);
  }

  /**
   * Escape sequences that take a fresh terminal to the modes in effect at `seq` (before the byte
   * there): what a view writes before output it reads back from `seq`. '' when they are a fresh
   * terminal's own. Scroll regions are set with the cursor saved and restored around them, as
   * DECSTBM homes it.
   */
  restoreAt(seq: number): string {
    const k = this.lastChangeAtOrBefore(seq);
    const flags = this.flagsAt[k] ?? 0;
    const regions = this.regionsAt[k] ?? 0;
    let out = regionSequence(Math.floor(regions / REGION_BITS));
    if (flags & ALT_SCREEN) out += '\x1b[?1049h' + regionSequence(regions % REGION_BITS);
    const set: number[] = [];
    const reset: number[] = [];
    if (flags & APP_CURSOR_KEYS) set.push(1);
    const mouse = (flags >> MOUSE_SHIFT) & 7;
    if (mouse) set.push(MOUSE_PROTOCOLS[mouse - 1] ?? 1000);
    const encoding = (flags >> ENCODING_SHIFT) & 7;
    if (encoding) set.push(MOUSE_ENCODINGS[encoding - 1] ?? 1006);
    if (flags & FOCUS_REPORTS) set.push(1004);
    if (flags & BRACKETED_PASTE) set.push(2004);
    if (flags & NO_AUTOWRAP) reset.push(7);
    if (flags & CURSOR_HIDDEN) reset.push(25);
    if (set.length) out += `\x1b[?${set.join(';')}h`;
    if (reset.length) out += `\x1b[?${reset.join(';')}l`;
    if (flags & APP_KEYPAD) out += '\x1b=';
    return out;
  }

  /** For tests and diagnostics: how many changes are kept. */
  get changesKept(): number {
    return this.seqs.length - this.head;
  }

  private lastChangeAtOrBefore(seq: number): number {
    let lo = this.head;
    let hi = this.seqs.length - 1;
    if ((this.seqs[hi] ?? 0) <= seq) return hi;
    // Before the oldest change kept (only once MAX_CHANGES dropped some): the oldest is the best guess.
    if ((this.seqs[lo] ?? 0) > seq) return lo;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.seqs[mid] ?? 0) <= seq) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * Reads the sequence starting with the ESC at b[i] and applies it; returns where scanning goes
   * on, or INCOMPLETE. `seqOf0` is the seq of b[0].
   */
  private parse(b: Buffer, i: number, seqOf0: number): number {
    if (i + 1 >= b.length) return INCOMPLETE;
    switch (b[i + 1]) {
      case 0x5b: // [
        return this.parseCsi(b, i + 2, seqOf0);
      case 0x63: // c: RIS
        this.change(0, 0, seqOf0 + i + 2);
        return i + 2;
      case 0x3d: // =: application keypad
        this.change(this.flags | APP_KEYPAD, this.regions, seqOf0 + i + 2);
        return i + 2;
      case 0x3e: // >: numeric keypad
        this.change(this.flags & ~APP_KEYPAD, this.regions, seqOf0 + i + 2);
        return i + 2;
      default:
        return i + 1;
    }
  }

  /**
   * Finds the end of the CSI sequence whose parameters start at b[start]; only the few that change
   * a mode tracked here (DECSET/DECRST, DECSTBM, DECSTR) are read further. Most CSI sequences are
   * colours and cursor moves, and they cost this one pass over their bytes.
   */
  private parseCsi(b: Buffer, start: number, seqOf0: number): number {
    let prefix = 0;
    let intermediate = 0;
    let ignored = false;
    for (let j = start; j < b.length; j++) {
      const x = b[j] ?? 0;
      if (x >= 0x30 && x <= 0x3f) {
        if (x >= 0x3c) {
          // A private marker: first, or xterm ignores the whole sequence.
          if (j === start) prefix = x;
          else ignored = true;
        } else if (intermediate) ignored = true;
      } else if (x >= 0x40 && x <= 0x7e) {
        // Only h, l (DECSET/DECRST), r (DECSTBM) and p (DECSTR) can be of interest.
        if (!ignored && (x === 0x68 || x === 0x6c || x === 0x72 || x === 0x70)) {
          this.dispatchCsi(b, prefix ? start + 1 : start, j, prefix, intermediate, seqOf0 + j + 1);
        }
        return j + 1;
      } else if (x >= 0x20 && x <= 0x2f) {
        if (intermediate) ignored = true;
        intermediate = x;
      } else if (x === ESC || x === 0x18 || x === 0x1a) {
        // ESC starts another sequence; CAN and SUB cancel this one.
        return j;
      }
      // Other C0 controls act inside a sequence without ending it; DEL is ignored.
    }
    return INCOMPLETE;
  }

  /** The parameters in b[from, to) (digits and separators; controls inside skipped), into this.params; returns how many. */
  private readParams(b: Buffer, from: number, to: number): number {
    const params = this.params;
    let count = 0;
    let value = 0;
    for (let j = from; j < to; j++) {
      const x = b[j] ?? 0;
      if (x >= 0x30 && x <= 0x39) value = Math.min(value * 10 + (x - 0x30), 99_999);
      else if ((x === 0x3b || x === 0x3a) && count < MAX_PARAMS - 1) {
        params[count++] = value;
        value = 0;
      }
    }
    params[count++] = value;
    return count;
  }

  private dispatchCsi(b: Buffer, paramsFrom: number, finalAt: number, prefix: number, intermediate: number, seqAfter: number): void {
    const final = b[finalAt];
    if (prefix === 0x3f && intermediate === 0 && (final === 0x68 || final === 0x6c)) {
      const on = final === 0x68; // h: DECSET, l: DECRST
      const count = this.readParams(b, paramsFrom, finalAt);
      let flags = this.flags;
      let regions = this.regions;
      for (let p = 0; p < count; p++) {
        const mode = this.params[p] ?? 0;
        const simple = SIMPLE_MODES.get(mode);
        if (simple) {
          flags = simple[1] === on ? flags | simple[0] : flags & ~simple[0];
        } else if (mode === 47 || mode === 1047 || mode === 1049) {
          // Leaving the alternate screen clears it, its scroll region with it.
          if (!on && flags & ALT_SCREEN) regions -= regions % REGION_BITS;
          flags = on ? flags | ALT_SCREEN : flags & ~ALT_SCREEN;
        } else if (MOUSE_PROTOCOLS.includes(mode)) {
          flags = (flags & ~(7 << MOUSE_SHIFT)) | (on ? (MOUSE_PROTOCOLS.indexOf(mode) + 1) << MOUSE_SHIFT : 0);
        } else if (MOUSE_ENCODINGS.includes(mode)) {
          const code = MOUSE_ENCODINGS.indexOf(mode) + 1;
          if (on) flags = (flags & ~(7 << ENCODING_SHIFT)) | (code << ENCODING_SHIFT);
          else if (((flags >> ENCODING_SHIFT) & 7) === code) flags &= ~(7 << ENCODING_SHIFT);
        }
      }
      this.change(flags, regions, seqAfter);
    } else if (prefix === 0 && intermediate === 0 && final === 0x72) {
      const count = this.readParams(b, paramsFrom, finalAt);
      this.setScrollRegion(this.params[0] ?? 0, count > 1 ? (this.params[1] ?? 0) : 0, seqAfter);
    } else if (prefix === 0 && intermediate === 0x21 && final === 0x70) {
      // DECSTR: the modes xterm.js resets, and the scroll region of the screen shown.
      this.change(this.flags & ~SOFT_RESET_FLAGS, this.withActiveRegion(0), seqAfter);
    }
  }

  /** DECSTBM as xterm.js reads it: missing or out-of-range bottom is the last row; a region of under two rows is ignored. */
  private setScrollRegion(topParam: number, bottomParam: number, seqAfter: number): void {
    const top = topParam || 1;
    const bottom = bottomParam === 0 || bottomParam > this.rows ? this.rows : bottomParam;
    if (bottom <= top) return;
    const whole = top === 1 && bottom === this.rows;
    this.change(this.flags, this.withActiveRegion(whole ? 0 : packRegion(top, bottom)), seqAfter);
  }

  private withActiveRegion(region: number): number {
    const normal = Math.floor(this.regions / REGION_BITS);
    const alt = this.regions % REGION_BITS;
    return this.flags & ALT_SCREEN ? normal * REGION_BITS + region : region * REGION_BITS + alt;
  }

  /** Takes the state in effect from `seq` on, and records it if it differs. */
  private change(flags: number, regions: number, seq: number): void {
    this.flags = flags;
    this.regions = regions;
    const last = this.seqs.length - 1;
    if (this.flagsAt[last] === flags && this.regionsAt[last] === regions) return;
    this.seqs.push(seq);
    this.flagsAt.push(flags);
    this.regionsAt.push(regions);
    this.forgetUnreadable();
  }

  /**
   * Drops changes no read can need: a read starts within the last `capacity` bytes, so of the
   * changes at or before that point only the latest counts. And past MAX_CHANGES, the oldest.
   */
  private forgetUnreadable(): void {
    const oldest = Math.max(0, this.end - this.capacity);
    while (this.head < this.seqs.length - 1 && (this.seqs[this.head + 1] ?? 0) <= oldest) this.head++;
    if (this.seqs.length - this.head > MAX_CHANGES) this.head = this.seqs.length - MAX_CHANGES;
    if (this.head > 1024 && this.head * 2 > this.seqs.length) {
      this.seqs.splice(0, this.head);
      this.flagsAt.splice(0, this.head);
      this.regionsAt.splice(0, this.head);
      this.head = 0;
    }
  }
}

/**
 * The next ESC in b at or after `from`, or -1. Coloured output has one every few bytes, where a
 * short look costs less than a native search (a call into C++ each); plain text goes to that search.
 */
function nextEsc(b: Buffer, from: number): number {
  const near = Math.min(b.length, from + 16);
  for (let i = from; i < near; i++) if (b[i] === ESC) return i;
  return near < b.length ? b.indexOf(ESC, near) : -1;
}

/** A scroll region set with the cursor kept where it is (DECSTBM homes it); '' for the whole screen. */
function regionSequence(region: number): string {
  if (region === 0) return '';
  return `\x1b7\x1b[${Math.floor(region / 1024)};${region % 1024}r\x1b8`;
}
