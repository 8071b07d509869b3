/**
 * Where a file picked with its folder ("Upload a folder") goes, relative to the target folder:
 * its webkitRelativePath, which ends in its name. Chromium writes a backslash in a file's name as
 * a slash there ("names/back/slash.txt" for the file "back\slash.txt"), which would make part of
 * the name a folder: the name comes from the File, in place of the segments it was written as.
 * A backslash in a FOLDER's name cannot be detected (no name of its own comes with the path to
 * compare it with): the folder "a\b" still comes as a folder "b" in a folder "a".
 */
export function relativePathOf(file: { name: string; webkitRelativePath: string }): string {
  const rel = file.webkitRelativePath;
  if (!rel) return file.name;
  if (rel === file.name || rel.endsWith(`/${file.name}`)) return rel;
  const asWritten = file.name.replaceAll('\\', '/');
  // The folders before the name: before the segments it was written as, else before the last one.
  const dir = rel === asWritten ? '' : rel.endsWith(`/${asWritten}`) ? rel.slice(0, -asWritten.length) : rel.slice(0, rel.lastIndexOf('/') + 1);
  return `${dir}${file.name}`;
}
