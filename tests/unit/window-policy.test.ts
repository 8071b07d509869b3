import { describe, expect, test } from 'vitest';
import {
  CONTENT_SECURITY_POLICY,
  isAllowedExternalUrl,
  isAllowedPermission,
  isAppUrl,
  windowOptions,
} from '../../src-main/electron/window-policy.js';

describe('Electron window policy', () => {
  const prefs = windowOptions('/app/preload.cjs').webPreferences ?? {};

  test('renderer is isolated, sandboxed and has no Node', () => {
    expect(prefs).toMatchObject({
      preload: '/app/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
  });

  test('CSP allows only our own scripts, no eval, no plugins, no framing', () => {
    const directives = Object.fromEntries(
      CONTENT_SECURITY_POLICY.split(';').map((d) => {
        const [name = '', ...values] = d.trim().split(/\s+/);
        return [name, values];
      }),
    );
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['object-src']).toEqual(["'none'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-eval');
  });

  test('external links: web and mail only', () => {
    expect(isAllowedExternalUrl('https://example.com/docs')).toBe(true);
    expect(isAllowedExternalUrl('http://10.0.0.1:8080/')).toBe(true);
    expect(isAllowedExternalUrl('mailto:ops@example.com')).toBe(true);
    for (const bad of ['javascript:alert(1)', 'file:///etc/passwd', 'smb://host/share', 'vscode://x', 'not a url', 'http://']) {
      expect(isAllowedExternalUrl(bad), bad).toBe(false);
    }
  });

  test('navigation stays on the app file', () => {
    const app = 'file:///opt/wraith/dist/renderer/index.html';
    expect(isAppUrl('file:///opt/wraith/dist/renderer/index.html#/tab', app)).toBe(true);
    expect(isAppUrl('file:///etc/passwd', app)).toBe(false);
    expect(isAppUrl('https://evil.example/', app)).toBe(false);
  });

  test('no permissions but clipboard write', () => {
    expect(isAllowedPermission('clipboard-sanitized-write')).toBe(true);
    for (const p of ['media', 'geolocation', 'notifications', 'openExternal', 'clipboard-read']) expect(isAllowedPermission(p)).toBe(false);
  });
});
