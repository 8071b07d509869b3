import type { z } from 'zod';
import type { EventDef, MethodDef } from './define.js';
import { aiEvents, aiMethods } from './ai.js';
import { auditMethods } from './audit.js';
import { connectionsEvents, connectionsMethods } from './connections.js';
import { healthMethods } from './health.js';
import { hostkeysMethods } from './hostkeys.js';
import { sessionsEvents, sessionsMethods } from './sessions.js';
import { ptyMethods } from './pty.js';
import { rdpEvents, rdpMethods } from './rdp.js';
import { settingsEvents, settingsMethods } from './settings.js';
import { sftpEvents, sftpMethods } from './sftp.js';
import { sshEvents, sshMethods } from './ssh.js';
import { terminalEvents, terminalMethods } from './terminal.js';
import { tunnelsEvents, tunnelsMethods } from './tunnels.js';
import { vaultMethods } from './vault.js';

/**
 * The whole contract. A domain adds its file beside this one and spreads it in here;
 * every host and transport picks it up from this object.
 */
export const methods = {
  ...healthMethods,
  ...vaultMethods,
  ...settingsMethods,
  ...connectionsMethods,
  ...hostkeysMethods,
  ...sessionsMethods,
  ...sshMethods,
  ...tunnelsMethods,
  ...terminalMethods,
  ...ptyMethods,
  ...rdpMethods,
  ...sftpMethods,
  ...aiMethods,
  ...auditMethods,
} satisfies Record<string, MethodDef>;

export const events = {
  ...settingsEvents,
  ...connectionsEvents,
  ...sessionsEvents,
  ...sshEvents,
  ...tunnelsEvents,
  ...terminalEvents,
  ...rdpEvents,
  ...sftpEvents,
  ...aiEvents,
} satisfies Record<string, EventDef>;

export type Methods = typeof methods;
export type MethodName = keyof Methods;
export type Events = typeof events;
export type EventName = keyof Events;

/** What a caller passes (defaults may be omitted). */
export type Input<M extends MethodName> = z.input<Methods[M]['input']>;
/** What a handler receives (defaults applied). */
export type ParsedInput<M extends MethodName> = z.output<Methods[M]['input']>;
export type Output<M extends MethodName> = z.output<Methods[M]['output']>;
export type EventPayload<E extends EventName> = z.output<Events[E]['payload']>;

export function isMethodName(name: string): name is MethodName {
  return Object.prototype.hasOwnProperty.call(methods, name);
}

export function isEventName(name: string): name is EventName {
  return Object.prototype.hasOwnProperty.call(events, name);
}

export * from './define.js';
export * from './ai.js';
export * from './audit.js';
export * from './connections.js';
export * from './health.js';
export * from './hostkeys.js';
export * from './sessions.js';
export * from './pty.js';
export * from './rdp.js';
export * from './settings.js';
export * from './sftp.js';
export * from './ssh.js';
export * from './terminal.js';
export * from './vault.js';
