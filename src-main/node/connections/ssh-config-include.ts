import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import SSHConfig, { type Directive, type Line, type Match } from 'ssh-config';
import { readLocalFileSync } from '../local-files.js';
import { expandHome } from '../paths.js';

/** How deep Include may nest, as OpenSSH's READCONF_MAX_DEPTH: deeper is a file that includes itself. */
const MAX_INCLUDE_DEPTH = 16;

/** A long ssh_config is tens of KB; a file this large is not one (and is not read whole to find out). */
const MAX_SSH_CONFIG_BYTES = 4 * 1024 * 1024;

/** The text of the ssh_config (or Included file) at `path`, read as local-files.ts reads what a caller names. */
export function readSshConfigText(path: string): string {
  return readLocalFileSync(path, { maxBytes: MAX_SSH_CONFIG_BYTES, what: 'an OpenSSH client config' }).toString('utf8');
}

/** Something of the config that was not read, under the file (or "pasted text") it is written in. */
export interface IncludeNote {
  host: string;
  note: string;
}

/**
 * The config with its Include lines replaced by the files they name, as ssh reads it: the
 * ssh-config package leaves Include to its caller. `dir` is where a relative path is looked up
 * (~/.ssh for a user's config, /etc/ssh for the system's), or null for pasted text, which has no
 * files beside it: its Includes are then left out, each with a note.
 */
export function expandIncludes(config: SSHConfig, label: string, dir: string | null, notes: IncludeNote[]): SSHConfig {
  const out = new SSHConfig();
  out.push(...expand(config, label, { dir, notes }, 0));
  return out;
}

interface Context {
  dir: string | null;
  notes: IncludeNote[];
}

function expand(config: SSHConfig, label: string, ctx: Context, depth: number): Line[] {
  const out: Line[] = [];
  for (const line of config) {
    if (line.type !== SSHConfig.DIRECTIVE) {
      out.push(line);
    } else if (isInclude(line)) {
      // Before the first Host or Match: what the files hold applies as if written here.
      out.push(...include(line, label, ctx, depth));
    } else if ('config' in line) {
      let section = openAgain(line);
      out.push(section);
      for (const sub of line.config) {
        if (sub.type !== SSHConfig.DIRECTIVE || !isInclude(sub)) {
          section.config.push(sub);
          continue;
        }
        const lines = include(sub, label, ctx, depth);
        const firstSection = lines.findIndex((l) => 'config' in l);
        // Settings before a file's first Host or Match apply where this section does: they stay in it.
        section.config.push(...(firstSection < 0 ? lines : lines.slice(0, firstSection)));
        if (firstSection < 0) continue;
        if (appliesToAll(line)) {
          // Under Host * or Match all (the usual way to Include at the end of a file) the file's own
          // Host and Match entries decide alone, so they can stand at the top level; the rest of
          // this section follows in a copy of it.
          out.push(...lines.slice(firstSection));
          section = openAgain(line);
          out.push(section);
        } else {
          ctx.notes.push({
            host: label,
            note: `${show(sub)}: the Host and Match entries it reads are not imported, as they apply only where "${show(line)}" does; Wraith follows them for an Include at the top of a file, under Host * or under Match all.`,
          });
        }
      }
    } else {
      out.push(line);
    }
  }
  return out;
}

function include(line: Directive, label: string, ctx: Context, depth: number): Line[] {
  const { dir, notes } = ctx;
  if (dir === null) {
    notes.push({ host: label, note: `${show(line)}: not followed, pasted text has no files beside it. Import the file from disk, or paste what it includes too.` });
    return [];
  }
  if (depth >= MAX_INCLUDE_DEPTH) {
    notes.push({ host: label, note: `${show(line)}: not followed, Includes nest more than ${MAX_INCLUDE_DEPTH} deep (does a file include itself?).` });
    return [];
  }
  const out: Line[] = [];
  for (const spec of values(line)) {
    if (/%|\$\{/.test(spec)) {
      notes.push({ host: label, note: `Include ${spec}: not followed, Wraith does not expand the %-tokens and \${variables} in it.` });
      continue;
    }
    const pattern = expandHome(spec);
    const path = isAbsolute(pattern) ? pattern : join(dir, pattern);
    const files = globFiles(path);
    if (files.length === 0) {
      // ssh passes over this silently; an import says so, as the entries may be expected.
      notes.push({ host: label, note: `Include ${spec}: no file matches ${path}.` });
      continue;
    }
    for (const file of files) {
      let config: SSHConfig;
      try {
        config = SSHConfig.parse(readSshConfigText(file));
      } catch (err) {
        notes.push({ host: label, note: `Include ${spec}: ${file} cannot be read (${err instanceof Error ? err.message : String(err)}).` });
        continue;
      }
      out.push(...expand(config, displayPath(file), ctx, depth + 1));
    }
  }
  return out;
}

function isInclude(line: Directive): boolean {
  return line.param.toLowerCase() === 'include';
}

function values(line: Directive): string[] {
  return typeof line.value === 'string' ? [line.value] : line.value.map((v) => v.val);
}

/** A directive as a person would write it, for notes. */
export function show(line: Directive): string {
  const vals = typeof line.value === 'string' ? [line.value] : line.value.map((v) => (v.quoted ? `"${v.val}"` : v.val));
  return [line.param, ...vals].join(' ');
}

/** Host * (no negation) or Match all: a section that applies to every host. */
function appliesToAll(section: Directive | Match): boolean {
  if (section.param.toLowerCase() === 'match') return 'criteria' in section && Object.keys(section.criteria).every((k) => k.toLowerCase() === 'all');
  const patterns = values(section).flatMap((v) => v.split(','));
  return patterns.includes('*') && !patterns.some((p) => p.startsWith('!'));
}

/** An empty copy of a Host or Match line, to collect the lines of its section anew. */
function openAgain<T extends Directive>(section: T): T & { config: SSHConfig } {
  return { ...section, config: new SSHConfig() };
}

export function displayPath(p: string): string {
  const home = homedir();
  return p.startsWith(`${home}/`) ? `~/${p.slice(home.length + 1)}` : p;
}

/**
 * The files an absolute glob(7) pattern names, sorted, as ssh's Include reads them: *, ? and [...] in any
 * part of the path; a wildcard matches no leading dot. Node 20 (`wraith serve`) has no fs.glob.
 */
function globFiles(pattern: string): string[] {
  let paths = ['/'];
  for (const part of pattern.split('/').filter(Boolean)) {
    if (!/[*?[]/.test(part)) {
      paths = paths.map((p) => join(p, part));
      continue;
    }
    const re = globPart(part);
    paths = paths.flatMap((p) => {
      try {
        return readdirSync(p)
          .filter((name) => re.test(name) && (!name.startsWith('.') || part.startsWith('.')))
          .map((name) => join(p, name));
      } catch {
        return [];
      }
    });
  }
  // What is not there matches nothing; anything else is read, and one that cannot be (a directory, no permission) gets a note.
  return paths.filter((p) => existsSync(p)).sort();
}

function globPart(part: string): RegExp {
  let re = '';
  for (let i = 0; i < part.length; i++) {
    const c = part.charAt(i);
    const close = c === '[' ? part.indexOf(']', i + 2) : -1;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (close > 0) {
      const body = part.slice(i + 1, close);
      const negate = body.startsWith('!');
      re += `[${negate ? '^' : ''}${(negate ? body.slice(1) : body).replace(/[\\\]^]/g, '\\$&')}]`;
      i = close;
    } else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
