/**
 * The temp names transfers and saves write to before renaming into place (nothing partial ever
 * stands under the real name), and how errors say them: a person never asked for a file called
 * ".notes.txt.wraith-part-1a2b3c4d" and should read "notes.txt" in what went wrong.
 */
import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';

/** ".name.wraith-part-1a2b3c4d": hidden, recognisable, unique. */
const TEMP_BASENAME = /^\.(.+)\.wraith-part-[0-9a-f]{8}$/s;

/**
 * ".name.wraith-part-1a2b3c4d" for a file called name. The name is shortened so the temp stays
 * within the usual 255-byte limit for a file name.
 */
export function tempBasename(name: string): string {
  let short = name;
  while (Buffer.byteLength(short) > 200) short = short.slice(0, -1);
  return `.${short}.wraith-part-${randomBytes(4).toString('hex')}`;
}

/** The temp beside a remote destination. */
export function tempNameFor(path: string): string {
  return posix.join(posix.dirname(path), tempBasename(posix.basename(path)));
}

/** Whether a file name is one tempBasename() makes. */
export function isTempBasename(name: string): boolean {
  return TEMP_BASENAME.test(name);
}

/**
 * A temp name as a part of a path in a text: '/' or '\\' (a local path on Windows), a quote, a
 * space, or the text's start or end around it.
 */
const TEMP_PART = /(^|[\\/'"\s])\.([^\\/]+?)\.wraith-part-[0-9a-f]{8}(?![^\\/'"\s])/g;

/**
 * `text` (a path, or a message naming paths) as a person should read it: each part of a path that
 * is one of our temp names becomes the name it stands for (a file, or a folder built under a temp
 * name and everything in it).
 */
export function shownPath(text: string): string {
  return text.replace(TEMP_PART, '$1$2');
}
