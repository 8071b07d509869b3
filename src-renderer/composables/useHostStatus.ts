import { onScopeDispose, shallowRef } from 'vue';
import { type LinkStatus, useHost } from '../transport/index.js';

/** The link to the host as a ref (open, connecting, reconnecting after a drop). */
export function useHostStatus() {
  const host = useHost();
  const status = shallowRef<LinkStatus>(host.current);
  const off = host.onStatus((s) => (status.value = s));
  onScopeDispose(off);
  return { status, kind: host.kind };
}
