/**
 * Rows dragged out of the Files panel carry their remote paths under this type (and as plain
 * text, one per line); the panel's folders take them to move them, a terminal to type them.
 * A drop of files from the desktop (an upload) never carries it.
 */
export const DRAGGED_PATHS_TYPE = 'application/x-wraith-sftp-paths';

export function isPathsDrag(ev: DragEvent): boolean {
  return ev.dataTransfer?.types.includes(DRAGGED_PATHS_TYPE) ?? false;
}

/** The paths of a drop, or [] when it is not rows of the panel (or not readable JSON). */
export function droppedPaths(ev: DragEvent): string[] {
  try {
    const v: unknown = JSON.parse(ev.dataTransfer?.getData(DRAGGED_PATHS_TYPE) || '[]');
    return Array.isArray(v) ? v.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}
