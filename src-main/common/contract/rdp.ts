import { z } from 'zod';
import { Bytes, Id, Ok, event, method } from './define.js';
import { OneTimeCredential, PromptTag } from './ssh.js';

const Coord = z.number().int('Coordinates are whole pixels').min(0).max(16384);
export const RdpMouseButton = z.enum(['left', 'right', 'middle']);

export const RdpRect = z.object({
  x: z.number().int(),
  y: z.number().int(),
  width: z.number().int(),
  height: z.number().int(),
  /** RGBA, width*height*4 bytes, rows packed. */
  data: Bytes,
});

export const rdpMethods = {
  'rdp.open': method(
    z.object({
      connectionId: Id,
      width: z.number().int().min(200).max(8192).optional(),
      height: z.number().int().min(200).max(8192).optional(),
      /** For the SSH jump hosts on the way, one per hop that needs one (as ssh.open's). */
      credentials: z.array(OneTimeCredential).max(16).optional(),
      /** Carried by every ssh.prompt a jump host on the way asks (as ssh.open's). */
      promptTag: PromptTag.optional(),
    }),
    z.object({ sessionId: Id, width: z.number().int(), height: z.number().int() }),
    'Connects a saved RDP connection (certificate checked like an SSH host key). Through an SSH jump host, every hop is checked ' +
      'and logged in to as ssh.open does: a jump host whose password or key passphrase is not saved (or is refused) fails EAUTH with ' +
      'details.reason credential-required / credential-rejected, and `credentials` then gives one per hop for this connect ' +
      '(saved in the vault only with save: true, once that hop accepted it). Cancelling the call (or the caller going away) ' +
      'gives the connect up, a jump host\'s login prompt included: ECANCELLED, and no session is left. ' +
      'A jump host\'s own login questions (keyboard-interactive) come as ssh.prompt events, carrying `promptTag` when one is given.',
  ),
  'rdp.close': method(z.object({ sessionId: Id }), Ok, 'Disconnects an RDP session.'),
  'rdp.reconnect': method(
    z.object({ sessionId: Id, credentials: z.array(OneTimeCredential).max(16).optional(), promptTag: PromptTag.optional() }),
    z.object({ width: z.number().int(), height: z.number().int() }),
    'Connects a disconnected RDP session again, in the same tab, with its connection as saved now (ENOTFOUND once deleted); ' +
      '`credentials`, `promptTag` and cancelling as for rdp.open (the session stays, disconnected).',
  ),
  'rdp.framebuffer': method(
    z.object({ sessionId: Id }),
    z.object({ width: z.number().int(), height: z.number().int(), data: Bytes }),
    'The whole current desktop as RGBA bytes (first paint, or repaint after a gap).',
  ),
  'rdp.ack': method(z.object({ sessionId: Id }), Ok, 'Flow control: the view has painted one rdp.frame event.'),
  'rdp.mouse': method(
    z.object({
      sessionId: Id,
      action: z.enum(['move', 'down', 'up', 'click', 'doubleclick', 'wheel']),
      x: Coord,
      y: Coord,
      button: RdpMouseButton.default('left'),
      /** Wheel notches; positive scrolls down (or right when horizontal). */
      delta: z.number().min(-100).max(100).default(0),
      horizontal: z.boolean().default(false),
    }),
    Ok,
    'Mouse input in desktop coordinates.',
  ),
  'rdp.key': method(
    z.object({ sessionId: Id, code: z.string().min(1).max(40), down: z.boolean() }),
    z.object({ mapped: z.boolean() }),
    'One key by KeyboardEvent.code ("KeyA", "MetaLeft", "PrintScreen"); mapped=false if unknown.',
  ),
  'rdp.type': method(z.object({ sessionId: Id, text: z.string().min(1).max(100_000) }), Ok, 'Types text.'),
  'rdp.keypress': method(
    z.object({ sessionId: Id, keys: z.string().min(1).max(100) }),
    Ok,
    'Presses a combination like "enter", "ctrl+c", "alt+tab", "win+r", "ctrl+alt+delete".',
  ),
  'rdp.resize': method(
    z.object({ sessionId: Id, width: z.number().int().min(200).max(8192), height: z.number().int().min(200).max(8192) }),
    z.object({ width: z.number().int(), height: z.number().int() }),
    'Changes the desktop size (reconnects at the new size, through the jump host tunnel still up if there is one; the server may pick another). ' +
      'A disconnected session is not connected by it: it fails ESESSIONCLOSED, and its next rdp.reconnect asks for this size.',
  ),
  'rdp.screenshot': method(
    z.object({
      sessionId: Id,
      maxWidth: z.number().int().min(64).max(4096).default(1280),
      maxHeight: z.number().int().min(64).max(4096).default(720),
      format: z.enum(['jpeg', 'png']).default('jpeg'),
    }),
    z.object({
      mime: z.enum(['image/jpeg', 'image/png']),
      data: z.string(),
      width: z.number().int(),
      height: z.number().int(),
      /** Screenshot pixels per desktop pixel: desktop x = round(x / scale). */
      scale: z.number(),
      desktopWidth: z.number().int(),
      desktopHeight: z.number().int(),
    }),
    'The desktop as an image (base64) fit within maxWidth x maxHeight, with the scale used.',
  ),
};

export const rdpEvents = {
  'rdp.frame': event(z.object({ sessionId: Id, rects: z.array(RdpRect) }), 'Changed parts of the desktop.'),
  'rdp.resized': event(z.object({ sessionId: Id, width: z.number().int(), height: z.number().int() }), 'The desktop size changed.'),
  'rdp.closed': event(
    z.object({ sessionId: Id, code: z.string(), message: z.string() }),
    'The RDP session ended (logoff, server gone, closed).',
  ),
};
