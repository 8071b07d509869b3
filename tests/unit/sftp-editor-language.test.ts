import { describe, expect, test } from 'vitest';
import { languageFor } from '../../src-renderer/features/sftp/code-editor.js';

describe('the file editor highlights what a sysadmin edits', () => {
  test.each([
    ['/etc/nginx/nginx.conf', 'nginx'],
    ['/etc/nginx/sites-available/default', 'nginx'],
    ['/etc/nginx/conf.d/app.conf', 'nginx'],
    ['/etc/systemd/system/app.service', 'INI'],
    ['/etc/systemd/journald.conf', 'INI'],
    ['/etc/mysql/my.cnf', 'INI'],
    ['/home/ops/.bashrc', 'Shell'],
    ['/opt/app/deploy.sh', 'Shell'],
    ['/srv/app/docker-compose.yml', 'YAML'],
    ['/srv/app/Dockerfile', 'Dockerfile'],
    ['/srv/app/Dockerfile.prod', 'Dockerfile'],
    ['/srv/app/package.json', 'JSON'],
    ['/srv/app/config.toml', 'TOML'],
    ['/srv/app/manage.py', 'Python'],
    ['/srv/db/schema.sql', 'SQL'],
  ])('%s → %s', (path, name) => {
    expect(languageFor(path)?.name).toBe(name);
  });

  test('a file of no known kind is plain text', () => {
    for (const path of ['/etc/hosts', '/var/log/syslog', '/etc/app/app.conf', '/root/notes']) expect(languageFor(path)).toBeNull();
  });
});
