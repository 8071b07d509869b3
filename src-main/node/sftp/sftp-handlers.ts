import { WraithError } from '../../common/errors.js';
import type { Router } from '../router.js';
import type { SavePathChooser, SftpService } from './sftp-service.js';

/** What only some hosts can do for transfers. */
export interface SftpHostFeatures {
  /** The host answers download and upload links over HTTP (`wraith serve`); elsewhere nothing could use them. */
  httpLinks: boolean;
  /** The desktop's native save dialog (Electron); absent in browser mode and tests that do not give one. */
  chooseSavePath?: SavePathChooser | null;
}

/** The sftp.* methods of the contract, served by one SftpService. */
export function registerSftpHandlers(r: Router, sftp: SftpService, opts: SftpHostFeatures = { httpLinks: false }): void {
  r.handle('sftp.list', (i) => sftp.list(i));
  r.handle('sftp.stat', (i) => sftp.stat(i.sessionId, i.path));
  r.handle('sftp.realpath', (i) => sftp.realpath(i.sessionId, i.path));
  r.handle('sftp.read', (i) => sftp.read(i));
  r.handle('sftp.write', (i) => sftp.write(i));
  r.handle('sftp.mkdir', (i) => sftp.mkdir(i));
  r.handle('sftp.rename', (i) => sftp.rename(i));
  r.handle('sftp.remove', (i) => sftp.remove(i));
  r.handle('sftp.chmod', (i) => sftp.chmod(i));
  r.handle('sftp.upload', (i) => sftp.upload(i));
  r.handle('sftp.download', (i) => sftp.download(i));
  r.handle('sftp.cancel', (i) => sftp.cancel(i.transferId));
  r.handle('sftp.transfers', (i) => sftp.listTransfers(i?.sessionId));
  // The caller's leaving for good (its page closed or reloaded) ends the upload it streams.
  r.handle('sftp.uploadBegin', (i, ctx) => sftp.uploadBegin(i, ctx.left));
  r.handle('sftp.uploadChunk', (i) => sftp.uploadChunk(i));
  r.handle('sftp.uploadEnd', (i) => sftp.uploadEnd(i.transferId));
  r.handle('sftp.readChunk', (i) => sftp.readChunk(i));
  r.handle('sftp.saveAs', (i) => {
    const choose = opts.chooseSavePath;
    if (!choose) throw new WraithError('EUNAVAILABLE', 'Save dialogs belong to the desktop app; in browser mode use sftp.downloadLink, or sftp.download to a path on the host.');
    return sftp.saveAs(i, choose);
  });
  r.handle('sftp.uploadLink', (i, ctx) => {
    if (!opts.httpLinks) throw new WraithError('EUNAVAILABLE', 'Upload links are served by `wraith serve` (browser mode); here, send sftp.uploadChunk calls.');
    return sftp.uploadLink(i.transferId, ctx.left);
  });
  r.handle('sftp.downloadLink', (i) => {
    if (!opts.httpLinks) throw new WraithError('EUNAVAILABLE', 'Download links are served by `wraith serve` (browser mode); here, use sftp.download to a local path.');
    return sftp.downloadLink(i);
  });
}
