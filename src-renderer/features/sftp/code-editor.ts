/**
 * The text editor of the Files panel: CodeMirror 6 with line numbers, search and replace
 * (Ctrl+F), undo history, bracket matching and highlighting for the files a sysadmin edits on a
 * server (shell, nginx, ini/systemd, YAML, TOML, JSON, Python, Dockerfile, SQL, XML, …).
 *
 * Loaded on demand (SftpEditor imports it when a file opens), so CodeMirror stays out of the
 * bundle the page starts with. The text given and taken uses LF only; line-endings.ts puts the
 * file's own endings back when it is saved.
 */
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { HighlightStyle, StreamLanguage, type StreamParser, bracketMatching, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { highlightSelectionMatches, search, searchKeymap } from '@codemirror/search';
import { Compartment, EditorState, type Extension } from '@codemirror/state';
import { EditorView, drawSelection, highlightActiveLine, highlightActiveLineGutter, highlightSpecialChars, keymap, lineNumbers } from '@codemirror/view';
import { tags } from '@lezer/highlight';
import { diff } from '@codemirror/legacy-modes/mode/diff';
import { dockerFile } from '@codemirror/legacy-modes/mode/dockerfile';
import { go } from '@codemirror/legacy-modes/mode/go';
import { javascript, json } from '@codemirror/legacy-modes/mode/javascript';
import { lua } from '@codemirror/legacy-modes/mode/lua';
import { nginx } from '@codemirror/legacy-modes/mode/nginx';
import { perl } from '@codemirror/legacy-modes/mode/perl';
import { properties } from '@codemirror/legacy-modes/mode/properties';
import { python } from '@codemirror/legacy-modes/mode/python';
import { ruby } from '@codemirror/legacy-modes/mode/ruby';
import { shell } from '@codemirror/legacy-modes/mode/shell';
import { standardSQL } from '@codemirror/legacy-modes/mode/sql';
import { toml } from '@codemirror/legacy-modes/mode/toml';
import { xml } from '@codemirror/legacy-modes/mode/xml';
import { yaml } from '@codemirror/legacy-modes/mode/yaml';

export interface CodeEditorOptions {
  /** The text, LF line ends only. */
  doc: string;
  /** The remote path: picks the highlighting. */
  path: string;
  /** The editable area's accessible name. */
  label: string;
  onChange: (text: string) => void;
  /** The text can be read, searched, selected and copied, not changed (a file the login may not write). */
  readOnly?: boolean;
}

export interface CodeEditor {
  /** The current text (LF). */
  text(): string;
  /** Replaces the whole text (a reload from the server); undo history starts again. */
  setText(text: string): void;
  /** Turns editing off (read-only) or on again, the text and its undo history kept. */
  setReadOnly(on: boolean): void;
  focus(): void;
  /** The highlighting in use, for the status line ("nginx", "YAML", … or null for plain text). */
  readonly languageName: string | null;
  destroy(): void;
}

interface LanguageChoice {
  name: string;
  parser: StreamParser<unknown>;
}

const byExtension: Record<string, LanguageChoice> = {};
const byName: Record<string, LanguageChoice> = {};
function register(name: string, parser: StreamParser<unknown>, extensions: string[], names: string[] = []): void {
  const choice = { name, parser };
  for (const e of extensions) byExtension[e] = choice;
  for (const n of names) byName[n] = choice;
}
register('Shell', shell as StreamParser<unknown>, ['sh', 'bash', 'zsh', 'ksh', 'env'], ['.bashrc', '.bash_profile', '.bash_logout', '.profile', '.zshrc', '.zprofile', '.kshrc', 'profile', 'bashrc', 'environment']);
register('nginx', nginx as StreamParser<unknown>, ['nginx'], ['nginx.conf']);
register('INI', properties as StreamParser<unknown>, ['ini', 'cfg', 'cnf', 'properties', 'service', 'socket', 'timer', 'mount', 'target', 'path', 'network', 'netdev', 'link', 'desktop'], ['.gitconfig', '.editorconfig']);
register('YAML', yaml as StreamParser<unknown>, ['yml', 'yaml'], ['.clang-format']);
register('TOML', toml as StreamParser<unknown>, ['toml'], ['Cargo.lock', 'Pipfile']);
register('JSON', json as StreamParser<unknown>, ['json', 'jsonc', 'json5'], ['.babelrc', '.eslintrc']);
register('JavaScript', javascript as StreamParser<unknown>, ['js', 'mjs', 'cjs', 'ts']);
register('Python', python as StreamParser<unknown>, ['py', 'pyw'], []);
register('Dockerfile', dockerFile as StreamParser<unknown>, ['dockerfile'], ['Dockerfile', 'Containerfile']);
register('SQL', standardSQL as StreamParser<unknown>, ['sql'], []);
register('XML', xml as StreamParser<unknown>, ['xml', 'svg', 'xsd', 'xsl', 'plist', 'html', 'htm'], []);
register('Diff', diff as StreamParser<unknown>, ['diff', 'patch'], []);
register('Lua', lua as StreamParser<unknown>, ['lua'], []);
register('Perl', perl as StreamParser<unknown>, ['pl', 'pm'], []);
register('Ruby', ruby as StreamParser<unknown>, ['rb', 'rake', 'gemspec'], ['Gemfile', 'Rakefile', 'Vagrantfile']);
register('Go', go as StreamParser<unknown>, ['go'], []);

/** Which highlighting a remote file gets: by its name, its extension, or the folder it is in. */
export function languageFor(path: string): LanguageChoice | null {
  const base = path.split('/').pop() ?? path;
  const named = byName[base];
  if (named) return named;
  const dot = base.lastIndexOf('.');
  const ext = dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
  if (/\/nginx\//.test(path) && (ext === 'conf' || ext === '' || /\/sites-(available|enabled)\//.test(path))) return byExtension.nginx ?? null;
  if (ext === 'conf' && /\/systemd\//.test(path)) return byExtension.ini ?? null;
  if (base.startsWith('Dockerfile.')) return byExtension.dockerfile ?? null;
  return byExtension[ext] ?? null;
}

/** The app's colours (theme.css) for CodeMirror's own parts. */
const theme = EditorView.theme(
  {
    '&': { height: '100%', backgroundColor: 'var(--bg)', color: 'var(--text)', fontSize: '12.5px' },
    '&.cm-focused': { outline: '2px solid var(--focus)', outlineOffset: '-2px' },
    '.cm-scroller': { fontFamily: 'var(--font-mono)', lineHeight: '1.5' },
    '.cm-content': { caretColor: 'var(--text)' },
    '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--text)' },
    '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection': {
      backgroundColor: 'var(--bg-active)',
    },
    '.cm-gutters': { backgroundColor: 'var(--bg-panel)', color: 'var(--text-muted)', border: 'none', borderRight: '1px solid var(--border)' },
    '.cm-activeLine': { backgroundColor: 'rgba(122, 167, 255, 0.06)' },
    '.cm-activeLineGutter': { backgroundColor: 'var(--bg-hover)', color: 'var(--text)' },
    '.cm-matchingBracket': { backgroundColor: 'rgba(122, 167, 255, 0.25)', outline: 'none' },
    '.cm-selectionMatch': { backgroundColor: 'rgba(232, 200, 114, 0.15)' },
    '.cm-searchMatch': { backgroundColor: 'rgba(232, 200, 114, 0.3)' },
    '.cm-searchMatch.cm-searchMatch-selected': { backgroundColor: 'rgba(232, 200, 114, 0.55)' },
    '.cm-panels': { backgroundColor: 'var(--bg-raised)', color: 'var(--text)' },
    '.cm-panels.cm-panels-bottom': { borderTop: '1px solid var(--border)' },
    '.cm-panel.cm-search input, .cm-panel.cm-search button': { fontSize: '12px' },
    '.cm-specialChar': { color: 'var(--danger)' },
  },
  { dark: true },
);

const highlight = HighlightStyle.define([
  { tag: [tags.comment, tags.meta], color: '#6f7b8f', fontStyle: 'italic' },
  { tag: [tags.keyword, tags.operatorKeyword, tags.modifier], color: '#c792ea' },
  { tag: [tags.string, tags.special(tags.string), tags.regexp], color: '#a5d6a7' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: '#f0a070' },
  { tag: [tags.variableName, tags.propertyName, tags.attributeName], color: '#82b1ff' },
  { tag: [tags.definition(tags.variableName), tags.function(tags.variableName), tags.labelName], color: '#7fdbca' },
  { tag: [tags.typeName, tags.className, tags.tagName, tags.heading], color: '#e8c872' },
  { tag: [tags.operator, tags.punctuation, tags.bracket], color: '#a9b4c6' },
  { tag: tags.inserted, color: '#6fcf8a' },
  { tag: tags.deleted, color: '#f0717a' },
  { tag: tags.invalid, color: '#f0717a' },
]);

/** Read-only, as CodeMirror and assistive technology are told it. */
function readOnlyExtension(on: boolean): Extension {
  return [EditorState.readOnly.of(on), EditorView.contentAttributes.of({ 'aria-readonly': String(on) })];
}

export function createCodeEditor(parent: HTMLElement, o: CodeEditorOptions): CodeEditor {
  const language = languageFor(o.path);
  const readOnly = new Compartment();
  let locked = o.readOnly === true;
  const extensions = (): Extension[] => [
    readOnly.of(readOnlyExtension(locked)),
    lineNumbers(),
    highlightActiveLineGutter(),
    highlightSpecialChars(),
    history(),
    drawSelection(),
    indentOnInput(),
    bracketMatching(),
    highlightActiveLine(),
    highlightSelectionMatches(),
    search({ top: false }),
    // Ctrl+S is the dialog's (SftpEditor), like the rest of its keys.
    keymap.of([
      ...defaultKeymap,
      ...historyKeymap,
      ...searchKeymap,
      indentWithTab,
    ]),
    theme,
    syntaxHighlighting(highlight),
    language ? StreamLanguage.define(language.parser) : [],
    EditorView.contentAttributes.of({ 'aria-label': o.label, 'aria-multiline': 'true', spellcheck: 'false' }),
    EditorView.updateListener.of((u) => {
      if (u.docChanged) o.onChange(u.state.doc.toString());
    }),
  ];
  const view = new EditorView({ parent, state: EditorState.create({ doc: o.doc, extensions: extensions() }) });
  return {
    text: () => view.state.doc.toString(),
    setText: (text) => view.setState(EditorState.create({ doc: text, extensions: extensions() })),
    setReadOnly: (on) => {
      locked = on;
      view.dispatch({ effects: readOnly.reconfigure(readOnlyExtension(on)) });
    },
    focus: () => view.focus(),
    languageName: language?.name ?? null,
    destroy: () => view.destroy(),
  };
}
