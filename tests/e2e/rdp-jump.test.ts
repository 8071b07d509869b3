/**
 * An RDP tab whose desktop is reached through an SSH jump host, in real Chromium against a real
 * sshd (the jump host) and a real RDP server (freerdp-shadow-cli on Xvfb): the jump host's SSH key
 * is asked about in the RDP tab with the SSH tab's card, naming the hop, and Trust connects on to
 * the desktop; a changed or revoked key is refused there as an SSH tab refuses it. A jump host
 * with no saved password is asked for it in the RDP tab with the SSH tab's password card; a jump
 * host's login question (keyboard-interactive) is asked in the tab too, and a tab closed while it
 * is up gives the connect up. The tests run in order on one page (the first trusts the desktop's
 * certificate).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { ContractClient } from '../../src-main/common/client.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { type TestBrowser, openApp } from '../fixtures/browser.js';
import { type RdpTestServer, startRdpServer } from '../fixtures/rdp-server.js';
import { until } from '../fixtures/poll.js';
import { type SshdHandle, askingConnection, logThroughConnectionEnd, startSshd } from '../fixtures/sshd.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';
import { canvasPixel } from '../fixtures/rdp-page.js';

let rdp: RdpTestServer;
let sshd: SshdHandle;
let server: WraithServer;
let api: ContractClient;
let browser: TestBrowser;
let page: Page;

const pane = () => page.locator('.tab-panel:visible .rdp-pane');
const openDesk = () => page.getByRole('treeitem', { name: /^desk via gate, RDP/ }).dblclick();
/** How the cards name the jump host: its address, and which hop of the way it is. */
const hop = () => `${sshd.host}:${sshd.port} (jump host rdp gate, on the way to desk via gate)`;
const forgetJumpKey = () => api.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });

const pixel = (x: number, y: number) => canvasPixel(page, x, y);
const trustJumpKey = () => api.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
/** The desktop is shown: the root window's colour at its middle. */
const desktopShown = () =>
  expect
    .poll(async () => {
      const got = await pixel(400, 300);
      return got.length === 4 && Math.abs(got[0]! - 0xcc) <= 8 && Math.abs(got[1]! - 0x66) <= 8 && Math.abs(got[2]! - 0x33) <= 8;
    }, { timeout: 15_000 })
    .toBe(true);

beforeAll(async () => {
  rdp = await startRdpServer({ width: 800, height: 600 });
  await rdp.x('xsetroot', ['-solid', '#cc6633']);
  sshd = await startSshd();
  server = await startWraithServer();
  api = await connectWebSocket(server.url, server.token);
  await api.call('vault.init', { protection: 'keyfile' });
  const gate = await api.call('connections.create', {
    name: 'rdp gate', kind: 'ssh', host: sshd.host, port: sshd.port, username: sshd.users.password.username,
    secrets: { password: sshd.users.password.password },
  });
  await api.call('connections.create', { name: 'desk via gate', kind: 'rdp', host: rdp.host, port: rdp.port, jumpHostId: gate.id, rdpOptions: { security: 'tls' } });
  browser = await openApp(server.openUrl);
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  api?.close();
  await server?.stop();
  await sshd?.stop();
  await rdp?.dispose();
});

describe('RDP through an SSH jump host (needs sshd, Xvfb, freerdp2-shadow-x11: scripts/test.sh installs them)', () => {
  it("asks about the jump host's unknown key in the RDP tab, naming the hop; Trust connects on to the desktop", async () => {
    await openDesk();
    const question = pane().getByRole('alertdialog', { name: /First connection/ });
    await question.waitFor({ timeout: 20_000 });
    expect(await question.locator('h3').innerText()).toBe(`First connection to ${hop()}`);
    expect(await question.locator('.fingerprint').innerText()).toBe(sshd.hostKeyFingerprint);
    expect(await question.innerText()).toContain(sshd.hostKeyType);
    await question.getByRole('button', { name: 'Trust and connect' }).click();

    // The key is trusted as an SSH host key; the connect goes on, through the jump host, to the
    // desktop, whose own certificate is the next question.
    const certificate = pane().getByRole('alertdialog', { name: new RegExp(`First connection to 127\\.0\\.0\\.1:${rdp.port}$`) });
    await certificate.waitFor({ timeout: 20_000 });
    const trusted = await api.call('hostkeys.list');
    expect(trusted).toContainEqual(expect.objectContaining({ kind: 'ssh', host: sshd.host, port: sshd.port, fingerprint: sshd.hostKeyFingerprint }));
    await certificate.getByRole('button', { name: 'Trust and connect' }).click();

    await expect.poll(() => pane().getAttribute('data-phase'), { timeout: 20_000 }).toBe('open');
    await desktopShown();
    expect(sshd.readLog()).toMatch(new RegExp(`direct_tcpip.*target 127\\.0\\.0\\.1 port ${rdp.port}`));
    await api.call('sessions.close', { sessionId: (await pane().getAttribute('data-session-id')) ?? '' });
  });

  it("refuses a changed or revoked jump host key in the RDP tab as an SSH tab does, naming the hop", async () => {
    await forgetJumpKey();
    await api.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: `SHA256:${'A'.repeat(43)}` });
    await openDesk();
    const changed = pane().getByRole('alertdialog', { name: /has changed/ });
    await changed.waitFor({ timeout: 20_000 });
    expect(await changed.locator('h3').innerText()).toBe(`⚠ The host key of ${hop()} has changed`);
    expect(await changed.innerText()).toContain(`${sshd.hostKeyType} ${sshd.hostKeyFingerprint}`);
    await changed.getByRole('button', { name: 'Close tab' }).click();
    await changed.waitFor({ state: 'detached' });
    await forgetJumpKey();

    const file = join(mkdtempSync(join(tmpdir(), 'wraith-e2e-kh-')), 'known_hosts');
    writeFileSync(file, `@revoked * ${readFileSync(join(sshd.dir, 'host_ed25519.pub'), 'utf8').split(' ').slice(0, 2).join(' ')}\n`);
    await api.call('hostkeys.importKnownHosts', { path: file });
    try {
      await openDesk();
      const revoked = pane().getByRole('alertdialog', { name: /is revoked/ });
      await revoked.waitFor({ timeout: 20_000 });
      expect(await revoked.locator('h3').innerText()).toBe(`⚠ The host key of ${hop()} is revoked`);
      expect(await revoked.innerText()).toContain(file);
      await revoked.getByRole('button', { name: 'Close tab' }).click();
      await revoked.waitFor({ state: 'detached' });
    } finally {
      await api.call('hostkeys.liftRevocation', { fingerprint: sshd.hostKeyFingerprint });
    }
  });

  it("asks for the jump host's password in the RDP tab with the SSH tab's card; a refused one is asked again, and the right one connects on to the desktop", async () => {
    await trustJumpKey();
    const gate = await api.call('connections.create', { name: 'pw gate', kind: 'ssh', host: sshd.host, port: sshd.port, username: sshd.users.password.username, authMethod: 'password' });
    await api.call('connections.create', { name: 'desk via pw gate', kind: 'rdp', host: rdp.host, port: rdp.port, jumpHostId: gate.id, rdpOptions: { security: 'tls' } });
    await page.getByRole('treeitem', { name: /^desk via pw gate, RDP/ }).dblclick();

    const card = pane().getByRole('alertdialog', { name: `Password for ${sshd.users.password.username}@${sshd.host}:${sshd.port} (pw gate)` });
    await card.waitFor({ timeout: 20_000 });
    await card.getByLabel('Password', { exact: true }).fill('not-the-password');
    await card.getByRole('button', { name: 'Connect' }).click();
    // Asked again (a fresh card: an empty field), saying the jump host refused it.
    await expect.poll(() => card.locator('.refusal').count(), { timeout: 20_000 }).toBe(1);
    expect(await card.locator('.refusal').innerText()).toMatch(/refused the login with that password: permission denied, please try again \(2 of 3\)\.$/);
    expect(await card.getByLabel('Password', { exact: true }).inputValue()).toBe('');

    await card.getByLabel('Password', { exact: true }).fill(sshd.users.password.password);
    await card.getByRole('button', { name: 'Connect' }).click();
    await expect.poll(() => pane().getAttribute('data-phase'), { timeout: 20_000 }).toBe('open');
    await desktopShown();
    // Typed for this connect only: the jump host still has no password saved.
    expect((await api.call('connections.get', { id: gate.id })).hasPassword).toBe(false);
    await api.call('sessions.close', { sessionId: (await pane().getAttribute('data-session-id')) ?? '' });
  });

  it("a jump host's login question is asked in the RDP tab, not over the window: the keys go to it, and its answer opens the desktop", async () => {
    await trustJumpKey();
    const gate = await askingConnection(api, sshd, 'ki gate');
    await api.call('connections.create', { name: 'desk via ki gate', kind: 'rdp', host: rdp.host, port: rdp.port, jumpHostId: gate.id, rdpOptions: { security: 'tls' } });
    const logFrom = sshd.readLog().length;
    await page.getByRole('treeitem', { name: /^desk via ki gate, RDP/ }).dblclick();
    const login = pane().getByRole('alertdialog', { name: `Login to ki gate (${sshd.host})` });
    await login.waitFor({ timeout: 20_000 });
    // Nothing over the window: the tab strip and the tree stay usable meanwhile.
    expect(await page.getByRole('dialog', { name: /^Login to / }).count()).toBe(0);
    await until('the keys in the login card', () => page.evaluate(() => !!document.activeElement?.closest('.rdp-pane .login-prompt input')), 5_000);
    await page.keyboard.type(sshd.users.password.password);
    await page.keyboard.press('Enter');
    await login.waitFor({ state: 'detached', timeout: 10_000 });
    await expect.poll(() => pane().getAttribute('data-phase'), { timeout: 20_000 }).toBe('open');
    await desktopShown();
    await page.locator('.tab-strip [role="tab"]', { hasText: 'desk via ki gate' }).locator('.tab-close').click();
    // The tunnel's connection to the jump host ends with the tab (read in sshd's log: connections
    // of earlier tests may still be closing, so a count of them would not say whose ended).
    await logThroughConnectionEnd(sshd, logFrom);
  });

  it("closing the RDP tab while its jump host's login prompt is up gives the connect up: the prompt is withdrawn, and no session is left", async () => {
    const desk = (await api.call('connections.list')).connections.find((c) => c.name === 'desk via ki gate');
    expect(desk).toBeDefined();
    const logFrom = sshd.readLog().length;
    await page.getByRole('treeitem', { name: /^desk via ki gate, RDP/ }).dblclick();
    const login = pane().getByRole('alertdialog', { name: /^Login to ki gate/ });
    await login.waitFor({ timeout: 20_000 });

    // The card is the tab's: its × takes a real click.
    await page.locator('.tab-strip [role="tab"]', { hasText: 'desk via ki gate' }).locator('.tab-close').click();
    // The prompt waits two minutes for its answer: it is withdrawn now (the jump host's log ends
    // that login's connection), and no window shows it.
    await logThroughConnectionEnd(sshd, logFrom);
    expect(await page.getByRole('dialog', { name: /^Login to / }).count()).toBe(0);
    expect((await api.call('sessions.list')).some((s) => s.connectionId === desk?.id)).toBe(false);
    expect(await page.locator('.tab-strip [role="tab"]', { hasText: 'desk via ki gate' }).count()).toBe(0);
  });
});
