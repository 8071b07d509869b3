/** A bench's command line: `--name N` numbers, `--name VALUE` strings and `--flag` switches. */
const argv = process.argv.slice(2);

/** The positive number after `--name`, else `dflt`. */
export function numberArg(name: string, dflt: number): number {
  const i = argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : dflt;
}

/** The word after `--name`, if given. */
export function stringArg(name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** Whether `--name` was given. */
export function flagArg(name: string): boolean {
  return argv.includes(`--${name}`);
}
