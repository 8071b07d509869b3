import { WebSocket } from 'ws';
import { ContractClient, type Wire } from '../common/client.js';
import { WraithError } from '../common/errors.js';
import type { ClientMessage, ServerMessage } from '../common/protocol.js';
import { decodeFrame, encodeFrame } from './codec.js';

/** A Node client of a running host (the CLI, tests, benchmarks). `url` is the host's http URL. */
export async function connectWebSocket(url: string, token: string, opts: { origin?: string } = {}): Promise<ContractClient> {
  const wsUrl = url.replace(/^http/, 'ws').replace(/\/$/, '') + '/ws';
  const ws = new WebSocket(wsUrl, {
    headers: { authorization: `Bearer ${token}` },
    ...(opts.origin ? { origin: opts.origin } : {}),
    maxPayload: 256 * 1024 * 1024,
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) =>
      reject(
        res.statusCode === 401
          ? new WraithError('EDENIED', `Wraith at ${url} refused the token: use the one \`wraith serve\` printed (a host started again has a new one).`)
          : new WraithError(
              res.statusCode === 403 ? 'EDENIED' : 'EIO',
              `Wraith at ${url} refused the connection (HTTP ${res.statusCode} ${res.statusMessage ?? ''}).`.trim(),
            ),
      ),
    );
    ws.once('error', (err) => reject(new WraithError('EUNAVAILABLE', `Cannot reach Wraith at ${url}: ${err.message}`)));
  });
  ws.binaryType = 'nodebuffer';
  const wire: Wire = {
    send: (m: ClientMessage) => ws.send(encodeFrame(m)),
    onMessage: (l) => ws.on('message', (data) => l(decodeFrame(data as Buffer) as ServerMessage)),
    onClose: (l) => ws.on('close', (code, reason) => l(reason.toString() || `code ${code}`)),
    close: () => ws.close(),
  };
  return new ContractClient(wire);
}
