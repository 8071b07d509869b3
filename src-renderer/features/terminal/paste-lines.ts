/**
 * How many lines a paste holds, as the shell will see them. Text copied from an editor or a web
 * page often ends with a line end; that ends the last line, it does not start another one.
 */
export function pastedLineCount(text: string): number {
  const body = text.replace(/[\r\n]+$/, '');
  return body ? body.split(/\r\n|\r|\n/).length : 0;
}
