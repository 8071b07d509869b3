/**
 * The RDP tab's cards, mended as the SSH tab's were, in real Chromium against a real RDP server
 * (freerdp-shadow-cli on Xvfb): Cancel or Escape on a certificate question that Reconnect asked
 * keeps the tab, back at "Disconnected — Reconnect" (a new tab's Cancel still closes it); a tab
 * whose saved connection was deleted, here or elsewhere, says so and offers Close tab instead of
 * a Reconnect; a tab closed while its desktop still connects gives the connect up. Each test opens
 * the tabs it needs and trusts the certificate itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import type { ContractClient } from '../../src-main/common/client.js';
import { connectWebSocket } from '../../src-main/server/ws-client.js';
import { type TestBrowser, openApp } from '../fixtures/browser.js';
import { type DelayProxy, startDelayProxy } from '../fixtures/delay-proxy.js';
import { type RdpTestServer, startRdpServer } from '../fixtures/rdp-server.js';
import { type WraithServer, startWraithServer } from '../fixtures/wraith-server.js';

let rdp: RdpTestServer;
let server: WraithServer;
let client: ContractClient;
let browser: TestBrowser;
let page: Page;
/** The RDP server a fifth of a second away each way: connecting takes seconds. */
let distant: DelayProxy;

const pane = () => page.locator('.tab-panel:visible .rdp-pane');
const tabs = () => page.locator('.tab');
const row = (name: string) => page.getByRole('treeitem', { name: new RegExp(`^${name}, RDP`) });
const tabOf = (name: string) => page.locator('.tab', { has: page.locator('.tab-title', { hasText: new RegExp(`^${name}$`) }) });
const disconnectedCard = (name: string) => pane().getByRole('alert').filter({ hasText: `Disconnected from ${name}` });
const firstConnection = () => pane().getByRole('alertdialog', { name: new RegExp(`First connection to 127\\.0\\.0\\.1:${rdp.port}`) });
const changedCertificate = () => pane().getByRole('alertdialog', { name: /certificate of 127\.0\.0\.1:\d+ has changed/ });
const hasFocus = (l: Locator) => l.evaluate((el) => el === document.activeElement);

async function certificate(): Promise<string> {
  return (await client.call('hostkeys.list')).find((k) => k.kind === 'rdp' && k.port === rdp.port)?.fingerprint ?? '';
}

/** Opens `name` from the tree, trusting the certificate if asked, and waits for the desktop. */
async function openDesktop(name: string): Promise<string> {
  await row(name).dblclick();
  await expect.poll(() => page.locator('.tab.active .tab-title').innerText()).toBe(name);
  await expect
    .poll(async () => {
      const phase = await pane().getAttribute('data-phase');
      if (phase === 'hostkey-unknown') await firstConnection().getByRole('button', { name: 'Trust and connect' }).click();
      return phase;
    }, { timeout: 20_000 })
    .toBe('open');
  return (await pane().getAttribute('data-session-id')) ?? '';
}

beforeAll(async () => {
  rdp = await startRdpServer({ width: 800, height: 600 });
  server = await startWraithServer();
  client = await connectWebSocket(server.url, server.token);
  for (const name of ['polish desktop', 'doomed desktop', 'gone desktop']) {
    await client.call('connections.create', { name, kind: 'rdp', host: rdp.host, port: rdp.port, rdpOptions: { security: 'tls' } });
  }
  distant = await startDelayProxy(rdp.port, 200);
  await client.call('connections.create', { name: 'far desktop', kind: 'rdp', host: rdp.host, port: distant.port, rdpOptions: { security: 'tls' } });
  browser = await openApp(server.openUrl);
  page = browser.page;
  await row('far desktop').waitFor();
});

afterAll(async () => {
  await browser?.close();
  client?.close();
  await server?.stop();
  await distant?.close();
  await rdp?.dispose();
});

describe('Cancel on a certificate question that Reconnect asked (needs Xvfb, freerdp2-shadow-x11)', () => {
  it('goes back to "Disconnected — Reconnect" in the same tab, by Escape or Cancel; a new tab\'s Cancel still closes it', async () => {
    const id = await openDesktop('polish desktop');
    const count = await tabs().count();
    const trusted = await certificate();
    expect(trusted).toBeTruthy();
    const card = disconnectedCard('polish desktop');
    /** Back where Reconnect was: the same tab and session, its card with Reconnect, which has the keys. */
    const backToDisconnected = async (why: string) => {
      await card.waitFor();
      expect(await card.innerText()).toContain(`Not reconnected: ${why}.`);
      expect(await pane().getAttribute('data-phase')).toBe('disconnected');
      expect(await pane().getAttribute('data-session-id')).toBe(id);
      expect(await tabs().count()).toBe(count);
      expect(await pane().getByRole('alertdialog').count()).toBe(0);
      await expect.poll(() => hasFocus(card.getByRole('button', { name: 'Reconnect' }))).toBe(true);
    };

    await rdp.killServer();
    await card.waitFor({ timeout: 20_000 });
    await rdp.restartServer();

    // The first-connection card (the certificate was forgotten meanwhile), by Escape.
    await client.call('hostkeys.forget', { kind: 'rdp', host: rdp.host, port: rdp.port });
    await card.getByRole('button', { name: 'Reconnect' }).click();
    await firstConnection().waitFor({ timeout: 20_000 });
    expect(await firstConnection().getByRole('button', { name: 'Close tab' }).count()).toBe(1);
    await expect.poll(() => hasFocus(firstConnection().getByRole('button', { name: 'Trust and connect' }))).toBe(true);
    await page.keyboard.press('Escape');
    await backToDisconnected("the server's certificate was not trusted");

    // The changed-certificate card (another certificate is trusted for the server), by its Cancel.
    await client.call('hostkeys.trust', { kind: 'rdp', host: rdp.host, port: rdp.port, keyType: 'x509', fingerprint: Array(32).fill('00').join(':') });
    await card.getByRole('button', { name: 'Reconnect' }).click();
    await changedCertificate().waitFor({ timeout: 20_000 });
    await changedCertificate().getByRole('button', { name: 'Cancel' }).click();
    await backToDisconnected("the server's certificate has changed");

    // Reconnect still works from there, in the same tab and session.
    await client.call('hostkeys.forget', { kind: 'rdp', host: rdp.host, port: rdp.port });
    await client.call('hostkeys.trust', { kind: 'rdp', host: rdp.host, port: rdp.port, keyType: 'x509', fingerprint: trusted });
    await card.getByRole('button', { name: 'Reconnect' }).click();
    await expect.poll(() => pane().getAttribute('data-phase'), { timeout: 20_000 }).toBe('open');
    expect(await pane().getAttribute('data-session-id')).toBe(id);
    expect(await tabs().count()).toBe(count);

    // A tab that never opened still closes on Cancel: it has nothing to go back to.
    await client.call('hostkeys.forget', { kind: 'rdp', host: rdp.host, port: rdp.port });
    await row('polish desktop').dblclick();
    await firstConnection().waitFor({ timeout: 20_000 });
    expect(await firstConnection().getByRole('button', { name: 'Close tab' }).count()).toBe(0);
    await firstConnection().getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => tabs().count()).toBe(count);
    await client.call('hostkeys.trust', { kind: 'rdp', host: rdp.host, port: rdp.port, keyType: 'x509', fingerprint: trusted });

    await tabOf('polish desktop').getByRole('button', { name: 'Close polish desktop' }).click();
    await expect.poll(() => tabs().count()).toBe(count - 1);
  });
});

describe('an RDP tab whose saved connection was deleted', () => {
  it('says so and offers Close tab instead of Reconnect, whether deleted here or elsewhere', async () => {
    const sessionOf: Record<string, string> = {};
    for (const name of ['doomed desktop', 'gone desktop']) sessionOf[name] = await openDesktop(name);
    const list = (await client.call('connections.list')).connections;
    const idOf = (name: string) => list.find((c) => c.name === name)?.id ?? '';

    // Deleted from the tree here.
    await row('doomed desktop').click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Delete…' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete connection' });
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await row('doomed desktop').waitFor({ state: 'detached' });
    // Deleted elsewhere (the CLI, another window): this window's list hears of it (connections.changed).
    await client.call('connections.delete', { id: idOf('gone desktop') });
    await row('gone desktop').waitFor({ state: 'detached' });

    await rdp.killServer();
    await rdp.restartServer();

    await tabOf('doomed desktop').click();
    const doomed = disconnectedCard('doomed desktop');
    await doomed.waitFor({ timeout: 20_000 });
    expect(await doomed.innerText()).toContain('The saved connection doomed desktop was deleted, so this tab cannot reconnect.');
    expect(await doomed.getByRole('button', { name: 'Reconnect' }).count()).toBe(0);
    expect(await doomed.getByRole('button', { name: 'Close tab' }).count()).toBe(1);
    expect(await pane().getByRole('toolbar').getByRole('button', { name: 'Reconnect' }).isDisabled()).toBe(true);

    // The one deleted elsewhere says the same, without a Reconnect that could only fail, and its
    // session stays disconnected.
    await tabOf('gone desktop').click();
    const gone = disconnectedCard('gone desktop');
    await gone.waitFor({ timeout: 20_000 });
    // Two Disconnected cards in the page, each named by its own heading.
    expect(await page.evaluate(() => [...document.querySelectorAll('[id]')].map((e) => e.id).filter((id, i, all) => all.indexOf(id) !== i))).toEqual([]);
    await expect.poll(() => gone.innerText(), { timeout: 20_000 }).toContain('The saved connection gone desktop was deleted, so this tab cannot reconnect.');
    expect(await gone.getByRole('button', { name: 'Reconnect' }).count()).toBe(0);
    expect(await pane().getAttribute('data-phase')).toBe('disconnected');
    const goneInfo = (await client.call('sessions.list')).find((s) => s.id === sessionOf['gone desktop']);
    expect(goneInfo?.state).toBe('disconnected');
    expect(await page.locator('body').innerText()).not.toContain(idOf('gone desktop'));

    // Close tab closes each, and ends its session on the host.
    const count = await tabs().count();
    await gone.getByRole('button', { name: 'Close tab' }).click();
    await tabOf('doomed desktop').click();
    await doomed.getByRole('button', { name: 'Close tab' }).click();
    await expect.poll(() => tabs().count()).toBe(count - 2);
    await expect.poll(async () => (await client.call('sessions.list')).filter((s) => s.kind === 'rdp')).toEqual([]);
  });
});

describe('an RDP tab closed while it connects (needs Xvfb, freerdp2-shadow-x11)', () => {
  it('gives the connect up, instead of keeping a desktop where no tab shows it', async () => {
    const connectionId = (await client.call('connections.list')).connections.find((c) => c.name === 'far desktop')?.id;
    const states: string[] = [];
    client.subscribe(['session.']);
    const off = client.on('session.changed', (s) => s.connectionId === connectionId && states.push(s.state));
    try {
      const count = await tabs().count();
      await row('far desktop').dblclick();
      await expect.poll(() => page.locator('.tab.active .tab-title').innerText()).toBe('far desktop');
      // Its certificate is asked about first (this port is new to the host); trusting it connects again.
      const question = pane().getByRole('alertdialog', { name: new RegExp(`First connection to 127\\.0\\.0\\.1:${distant.port}`) });
      await question.waitFor({ timeout: 30_000 });
      await expect.poll(() => distant.openConnections(), { timeout: 10_000 }).toBe(0); // the connect that asked has ended
      await question.getByRole('button', { name: 'Trust and connect' }).click();
      await expect.poll(() => pane().getAttribute('data-phase')).toBe('starting');
      await expect.poll(() => distant.openConnections(), { timeout: 10_000 }).toBe(1); // FreeRDP is connecting
      await tabOf('far desktop').getByRole('button', { name: 'Close far desktop' }).click();
      await expect.poll(() => tabs().count()).toBe(count);

      // The page cancels its rdp.open: the host gives FreeRDP's connect up, and no session ever
      // opens for the tab that is gone.
      await expect.poll(() => distant.openConnections(), { timeout: 20_000 }).toBe(0);
      expect(states).not.toContain('open');
      expect((await client.call('sessions.list')).filter((s) => s.connectionId === connectionId && s.state !== 'closed')).toEqual([]);
    } finally {
      off();
    }
  });
});
