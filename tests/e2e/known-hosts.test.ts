/**
 * The Known hosts dialog in real Chromium against a real sshd: the key trusted on first connect
 * is listed and can be forgotten; a known_hosts file hashed by OpenSSH (ssh-keyscan -H) is
 * imported, and the next connection goes through without asking; the filter finds the hashed
 * entry by the host it stands for; a jump host's key question names the hop; an import names the
 * servers whose key differs from the trusted one, and what it left out or stopped trusting as @revoked;
 * a server that offers a revoked key is refused in its tab with no way to trust it there, and the
 * dialog lists the revocation and lifts it after asking; each entry names the saved connections
 * that use it (a hashed one too), and the filter finds it by them.
 */
import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { ContractClient } from '../../src-main/common/client.js';
import { type AppWithSshd, startAppWithSshd } from '../fixtures/app-with-sshd.js';
import { createSshConnectionInUi } from '../fixtures/browser.js';
import type { SshdHandle } from '../fixtures/sshd.js';

let app: AppWithSshd;
let sshd: SshdHandle;
let page: Page;
let files: string;
/** The host's contract, for what the test sets up without the UI. */
let api: ContractClient;

const dialog = () => page.getByRole('dialog', { name: 'Known hosts' });
const table = () => dialog().getByRole('table', { name: 'Trusted keys' });

beforeAll(async () => {
  app = await startAppWithSshd();
  ({ sshd, api, page } = app);
  files = mkdtempSync(join(tmpdir(), 'wraith-e2e-known-hosts-'));
});

afterAll(async () => {
  await app?.stop();
  if (files) rmSync(files, { recursive: true, force: true });
});

async function openTab(): Promise<void> {
  await page.getByRole('treeitem', { name: /^kh sshd, SSH/ }).dblclick();
}

async function closeTab(): Promise<void> {
  await page.locator('.tab-panel:visible .xterm').click();
  await page.keyboard.press('Control+Shift+W');
  await expect.poll(() => page.locator('.tab').count()).toBe(0);
}

/** A new key made with ssh-keygen: its known_hosts "type base64" and its fingerprint. */
function anotherKey(): { line: string; fingerprint: string } {
  const dir = mkdtempSync(join(files, 'other-'));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'k')]);
  const fingerprint = execFileSync('ssh-keygen', ['-l', '-f', join(dir, 'k.pub')], { encoding: 'utf8' }).split(' ')[1] ?? '';
  return { line: readFileSync(join(dir, 'k.pub'), 'utf8').split(' ').slice(0, 2).join(' '), fingerprint };
}

describe('the Known hosts dialog', () => {
  it('explains itself while nothing is trusted', async () => {
    await createSshConnectionInUi(page, { name: 'kh sshd', host: sshd.host, port: sshd.port, ...sshd.users.password });
    await page.getByRole('button', { name: 'Known hosts' }).click();
    await expect.poll(() => dialog().innerText()).toContain('No trusted keys yet');
    await dialog().getByRole('button', { name: 'Close' }).last().click();
    await dialog().waitFor({ state: 'detached' });
  });

  it('lists the key trusted on first connect, and forgets it after asking', async () => {
    await openTab();
    await page.getByRole('alertdialog', { name: /First connection/ }).getByRole('button', { name: 'Trust and connect' }).click();
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    await closeTab();

    await page.getByRole('button', { name: 'Known hosts' }).click();
    const row = table().locator(`tr[data-host="${sshd.host}"]`);
    await expect.poll(() => row.innerText()).toContain(`${sshd.host}:${sshd.port}`);
    expect(await row.innerText()).toContain('ssh-ed25519');
    expect(await row.locator('.fingerprint').innerText()).toBe(sshd.hostKeyFingerprint);

    await row.getByRole('button', { name: `Forget ${sshd.host}:${sshd.port}` }).click();
    const confirm = page.getByRole('dialog', { name: 'Forget a trusted key' });
    await confirm.getByRole('button', { name: 'Forget' }).click();
    await expect.poll(() => dialog().innerText()).toContain('No trusted keys yet');
  });

  it('imports a known_hosts file hashed by OpenSSH; the server is then trusted without asking', async () => {
    const scanned = execFileSync('ssh-keyscan', ['-H', '-t', 'ed25519', '-p', String(sshd.port), sshd.host], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const path = join(files, 'known_hosts');
    writeFileSync(path, scanned);

    await dialog().getByRole('textbox', { name: 'known_hosts file of the host machine' }).fill(path);
    await dialog().getByRole('button', { name: 'Import known_hosts' }).click();
    await expect.poll(() => dialog().getByRole('status').innerText()).toBe('Imported 1 new host key.');
    const row = table().locator('tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.innerText()).toContain('hashed name');
    expect(await row.locator('.fingerprint').innerText()).toBe(sshd.hostKeyFingerprint);

    // A wrong path says which file it looked for.
    await dialog().getByRole('textbox', { name: 'known_hosts file of the host machine' }).fill(join(files, 'missing'));
    await dialog().getByRole('button', { name: 'Import known_hosts' }).click();
    await expect.poll(() => dialog().getByRole('alert').innerText()).toContain(`No known_hosts file at ${join(files, 'missing')}`);
    await dialog().getByRole('button', { name: 'Close' }).last().click();

    await openTab();
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    expect(await page.getByRole('alertdialog', { name: /First connection/ }).count()).toBe(0);
  });

  it('the filter finds a hashed entry by the host it stands for; it is forgotten from there', async () => {
    await page.getByRole('button', { name: 'Known hosts' }).click();
    const filter = dialog().getByRole('searchbox', { name: 'Filter known hosts' });
    const rows = table().locator('tbody tr');
    const nothing = () => dialog().getByText('Nothing matches the filter.').count();

    await filter.fill('10.9.9.9');
    await expect.poll(nothing).toBe(1);
    // The hashed name is of "[127.0.0.1]:port": the saved connection tells the port.
    await filter.fill(sshd.host);
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.innerText()).toContain('hashed name');
    await filter.fill(`${sshd.host}:1`);
    await expect.poll(nothing).toBe(1);
    await filter.fill(`${sshd.host}:${sshd.port}`);
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.locator('.fingerprint').innerText()).toBe(sshd.hostKeyFingerprint);

    await rows.getByRole('button', { name: 'Forget hashed name' }).click();
    await page.getByRole('dialog', { name: 'Forget a trusted key' }).getByRole('button', { name: 'Forget' }).click();
    await expect.poll(() => dialog().innerText()).toContain('No trusted keys yet');
    await dialog().getByRole('button', { name: 'Close' }).last().click();
    await dialog().waitFor({ state: 'detached' });
  });

  it("a jump host's key question names the hop, the first time and when its key changed", async () => {
    // The same sshd is the jump host ("kh sshd") and, through a forward on it, the target.
    await page.locator('.connections .panel-head').getByRole('button', { name: 'New connection' }).click();
    const form = page.getByRole('dialog', { name: 'New connection' });
    await form.locator('input[name=name]').fill('via kh');
    await form.locator('input[name=host]').fill(sshd.host);
    await form.locator('input[name=port]').fill(String(sshd.port));
    await form.locator('input[name=username]').fill(sshd.users.password.username);
    await form.locator('input[name=password]').fill(sshd.users.password.password);
    const jump = await form.locator('select[name=jumpHostId] option', { hasText: 'kh sshd' }).getAttribute('value');
    await form.locator('select[name=jumpHostId]').selectOption(jump ?? '');
    await form.getByRole('button', { name: 'Create' }).click();
    await form.waitFor({ state: 'detached' });
    const hop = `${sshd.host}:${sshd.port} (jump host kh sshd, on the way to via kh)`;
    const openVia = () => page.getByRole('treeitem', { name: /^via kh, SSH/ }).dblclick();
    const pane = () => page.locator('.tab-panel:visible');

    // A key trusted for the jump host that it does not offer.
    await api.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: anotherKey().fingerprint });
    await openVia();
    const changed = pane().getByRole('alertdialog', { name: /has changed/ });
    await changed.waitFor({ timeout: 20_000 });
    expect(await changed.locator('h3').innerText()).toBe(`⚠ The host key of ${hop} has changed`);
    await changed.getByRole('button', { name: 'Close tab' }).click();
    await changed.waitFor({ state: 'detached' });
    await api.call('hostkeys.forget', { kind: 'ssh', host: sshd.host, port: sshd.port });

    await openVia();
    const unknown = pane().getByRole('alertdialog', { name: /First connection/ });
    await unknown.waitFor({ timeout: 20_000 });
    expect(await unknown.locator('h3').innerText()).toBe(`First connection to ${hop}`);
    await unknown.getByRole('button', { name: 'Trust and connect' }).click();
    // The target is the same host:port, trusted now: no second question.
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
    expect(await page.getByRole('alertdialog', { name: /First connection/ }).count()).toBe(0);
  });

  it('an import names the servers whose key differs, leaves out keys marked @revoked and stops trusting them, saying where', async () => {
    const other = anotherKey();
    const revoked = anotherKey();
    const fresh = anotherKey();
    await api.call('hostkeys.trust', { kind: 'ssh', host: sshd.host, port: sshd.port, keyType: sshd.hostKeyType, fingerprint: sshd.hostKeyFingerprint });
    await api.call('hostkeys.trust', { kind: 'ssh', host: 'web01.example.com', port: 22, keyType: sshd.hostKeyType, fingerprint: revoked.fingerprint });
    const path = join(files, 'known_hosts_findings');
    writeFileSync(
      path,
      [`[${sshd.host}]:${sshd.port} ${other.line}`, `@revoked * ${revoked.line}`, `db2.example.com ${revoked.line}`, `new.example.com ${fresh.line}`, ''].join('\n'),
    );

    await page.getByRole('button', { name: 'Known hosts' }).click();
    await dialog().getByRole('textbox', { name: 'known_hosts file of the host machine' }).fill(path);
    await dialog().getByRole('button', { name: 'Import known_hosts' }).click();
    const status = dialog().getByRole('status');
    await expect.poll(() => status.innerText()).toContain(
      'Imported 1 new host key; skipped 1 line (markers, wildcard patterns or not a key). 1 entry left out: their key is marked @revoked in the file. ' +
        "Kept 1 trusted key the file has differently: a file never replaces a key Wraith trusts (forget it below to take the file's).",
    );
    // The server whose key differs, by name, with both keys: what the person has to look into.
    const differing = status.locator('[data-finding=conflicting] li');
    expect(await differing.count()).toBe(1);
    expect(await differing.innerText()).toBe(`${sshd.host}:${sshd.port} ssh-ed25519: Wraith trusts ${sshd.hostKeyFingerprint}, the file has ${other.fingerprint}`);
    // The key Wraith trusted that the file revokes: no longer trusted, and named.
    const untrusted = status.locator('[data-finding=revoked] li');
    expect(await untrusted.count()).toBe(1);
    expect(await untrusted.innerText()).toBe(`web01.example.com:22 ssh-ed25519 ${revoked.fingerprint}`);

    const hosts = await table().locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-host')));
    expect(hosts.sort()).toEqual([sshd.host, 'new.example.com']);
    await dialog().getByRole('button', { name: 'Close' }).last().click();
    await dialog().waitFor({ state: 'detached' });
  });

  it('a server that offers a key an import marked @revoked is refused in its tab, with no Trust; the dialog lists the revocation and lifts it after asking', async () => {
    const serverKey = readFileSync(join(sshd.dir, 'host_ed25519.pub'), 'utf8').split(' ').slice(0, 2).join(' ');
    const path = join(files, 'known_hosts_revokes_server');
    writeFileSync(path, `@revoked * ${serverKey}\n`);
    await api.call('hostkeys.importKnownHosts', { path });

    const tabsBefore = await page.locator('.tab').count();
    await openTab();
    const pane = page.locator('.tab-panel:visible');
    const card = pane.getByRole('alertdialog', { name: /is revoked/ });
    await card.waitFor({ timeout: 20_000 });
    expect(await card.locator('h3').innerText()).toBe(`⚠ The host key of ${sshd.host}:${sshd.port} is revoked`);
    const text = await card.innerText();
    expect(text).toContain('Wraith refused to connect and sent no password or key.');
    expect(text).toContain(`ssh-ed25519 ${sshd.hostKeyFingerprint}`);
    expect(text).toContain(path);
    // Nothing here trusts the key: the only ways out are away from it.
    expect(await card.getByRole('button').allInnerTexts()).toEqual(['Close tab']);
    expect(await page.locator('.tab.active .dot').getAttribute('class')).toContain('hostkey-revoked');
    // It has the keys: Escape closes the tab that never opened.
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('.tab').count()).toBe(tabsBefore);

    await page.getByRole('button', { name: 'Known hosts' }).click();
    const revokedRow = dialog().getByRole('table', { name: 'Revoked keys' }).locator(`tr[data-fingerprint="${sshd.hostKeyFingerprint}"]`);
    await expect.poll(() => revokedRow.innerText()).toContain(path);
    expect(await revokedRow.innerText()).toContain('ssh-ed25519');
    await revokedRow.getByRole('button', { name: `Lift the revocation of ${sshd.hostKeyFingerprint}` }).click();
    await page.getByRole('dialog', { name: 'Lift a revocation' }).getByRole('button', { name: 'Lift revocation' }).click();
    await revokedRow.waitFor({ state: 'detached' });
    await dialog().getByRole('button', { name: 'Close' }).last().click();
    await dialog().waitFor({ state: 'detached' });

    // Lifted, the key is as unknown as on a first connection: asked about, not trusted.
    await openTab();
    await pane.getByRole('alertdialog', { name: /First connection/ }).getByRole('button', { name: 'Trust and connect' }).click();
    await expect.poll(() => page.locator('.tab.active').getAttribute('class'), { timeout: 20_000 }).toContain('open');
  });
  it('names the saved connections of each entry (its kind only, a hashed entry too, many kept short); the filter finds an entry by them', async () => {
    // Four connections to one server; an RDP connection on the SSH server's port is not its user.
    for (const name of ['web-d', 'web-b', 'web-a', 'web-c']) {
      await api.call('connections.create', { name, kind: 'ssh', host: 'new.example.com', username: 'ops', authMethod: 'agent' });
    }
    await api.call('connections.create', { name: 'desk', kind: 'rdp', host: sshd.host, port: sshd.port });
    // A hashed entry (as HashKnownHosts writes one) for a saved connection's host and port.
    await api.call('connections.create', { name: 'hidden-db', kind: 'ssh', host: '10.77.0.1', port: 2222, username: 'ops', authMethod: 'agent' });
    const salt = randomBytes(20);
    const hashed = `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update('[10.77.0.1]:2222').digest('base64')}`;
    const path = join(files, 'known_hosts_hashed_connection');
    writeFileSync(path, `${hashed} ${anotherKey().line}\n`);
    await api.call('hostkeys.importKnownHosts', { path });

    await page.getByRole('button', { name: 'Known hosts' }).click();
    const usedBy = (row: ReturnType<typeof table>) => row.locator('.used-by');
    const sshdRow = table().locator(`tr[data-host="${sshd.host}"]`);
    await expect.poll(() => usedBy(sshdRow).innerText()).toBe('kh sshd, via kh');
    const many = table().locator('tr[data-host="new.example.com"]');
    expect(await usedBy(many).innerText()).toBe('web-a, web-b, web-c and 1 more');
    expect(await usedBy(many).getAttribute('title')).toBe('web-a, web-b, web-c, web-d');
    const hashedRow = table().locator(`tr[data-host="${hashed}"]`);
    expect(await hashedRow.innerText()).toContain('hashed name');
    await expect.poll(() => usedBy(hashedRow).innerText()).toBe('hidden-db');

    const filter = dialog().getByRole('searchbox', { name: 'Filter known hosts' });
    const hosts = () => table().locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-host')));
    await filter.fill('via kh');
    await expect.poll(hosts).toEqual([sshd.host]);
    await filter.fill('WEB-D');
    await expect.poll(hosts).toEqual(['new.example.com']);
    await filter.fill('hidden-db');
    await expect.poll(hosts).toEqual([hashed]);
    await filter.fill('desk');
    await expect.poll(() => dialog().getByText('Nothing matches the filter.').count()).toBe(1);
    await dialog().getByRole('button', { name: 'Close' }).last().click();
    await dialog().waitFor({ state: 'detached' });
  });
});
