/**
 * A word for a POSIX shell (bash, zsh, sh, fish alike): as it is when it holds only characters
 * no shell treats specially, else in single quotes (a quote inside as '\'').
 */
export function shellQuote(word: string): string {
  if (/^[\w./@%+=:,-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
