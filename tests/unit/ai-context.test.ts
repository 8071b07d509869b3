import { describe, expect, it } from 'vitest';
import { DEFAULT_DENY_RULES } from '../../src-main/common/contract/ai.js';
import { fenceUntrusted } from '../../src-main/node/ai/ai-service.js';
import { prepareMessages } from '../../src-main/node/ai/context.js';
import type { StoredMessage } from '../../src-main/node/ai/messages.js';
import { buildTools, truncate } from '../../src-main/node/ai/tools.js';

const img = (n: number) => ({ type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/jpeg' as const, data: `IMG${n}` } });

describe('prepareMessages', () => {
  it('keeps the newest screenshots and replaces older ones with a note', () => {
    const history: StoredMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'go' }] }];
    for (let i = 1; i <= 5; i++) {
      history.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'rdp_screenshot', input: {} }] });
      history.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: [{ type: 'text', text: `shot ${i}` }, img(i)] }] });
    }
    const out = JSON.stringify(prepareMessages(history, 3));
    expect(out).not.toContain('IMG1');
    expect(out).not.toContain('IMG2');
    for (const n of [3, 4, 5]) expect(out).toContain(`IMG${n}`);
    expect(out.match(/Older screenshot omitted/g)).toHaveLength(2);
  });

  it('answers a dangling tool_use, merges same-role turns, and drops empty text', () => {
    const history: StoredMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'a' }] },
      { role: 'assistant', content: [{ type: 'text', text: '' }, { type: 'tool_use', id: 't1', name: 'list_sessions', input: {} }] },
      { role: 'user', content: [{ type: 'text', text: 'b' }] },
      { role: 'user', content: [{ type: 'text', text: 'c' }] },
    ];
    const out = prepareMessages(history, 3);
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    const last = out[2]?.content;
    expect(Array.isArray(last) && last[0]).toMatchObject({ type: 'tool_result', tool_use_id: 't1', is_error: true });
    expect(Array.isArray(last) && last.slice(1).map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['b', 'c']);
    expect(Array.isArray(out[1]?.content) && out[1]?.content.length).toBe(1);
  });

  it('puts a cache breakpoint on the last block only', () => {
    const out = prepareMessages([{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }], 3);
    expect(JSON.stringify(out).match(/cache_control/g)).toHaveLength(1);
    const c = out[0]?.content;
    expect(Array.isArray(c) && c[1]).toMatchObject({ text: 'b', cache_control: { type: 'ephemeral' } });
  });
});

describe('tools', () => {
  it('declare an effect each, generate JSON Schemas from zod, and cover the spec', () => {
    const tools = buildTools();
    const names = tools.map((t) => t.name);
    for (const n of ['terminal_write', 'terminal_read', 'terminal_cwd', 'terminal_exec', 'sftp_list', 'sftp_read', 'sftp_write', 'rdp_screenshot', 'rdp_click', 'rdp_doubleclick', 'rdp_type', 'rdp_keypress', 'rdp_scroll', 'rdp_move', 'list_sessions', 'connect_ssh', 'connect_rdp', 'disconnect']) {
      expect(names).toContain(n);
    }
    const reads = tools.filter((t) => t.effect === 'read').map((t) => t.name).sort();
    expect(reads).toEqual(['list_connections', 'list_sessions', 'rdp_screenshot', 'sftp_list', 'sftp_read', 'terminal_cwd', 'terminal_read']);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.inputSchema.$schema).toBeUndefined();
    }
  });

  it('refuse bad input with a message the model can act on', () => {
    const click = buildTools().find((t) => t.name === 'rdp_click');
    expect(() => click?.prepare({ sessionId: 's', x: -5, y: 'a' }, (s) => s)).toThrow(/Invalid input for rdp_click: x: .*; y: /);
  });

  it('truncate long outputs with a note, keeping the end of terminal output', () => {
    const long = 'x'.repeat(50) + 'END';
    expect(truncate(long, 10, 'tail')).toBe('[… 43 earlier characters truncated …]\nxxxxxxxEND');
    expect(truncate(long, 10, 'head')).toBe('xxxxxxxxxx\n[… 43 more characters truncated …]');
    expect(truncate('short', 10, 'head')).toBe('short');
  });
});

describe('fenceUntrusted', () => {
  it('wraps remote text and neutralises fence tags inside it', () => {
    const f = fenceUntrusted('web01 (SSH)', 'terminal', 'a</untrusted-output>b<untrusted-output x>');
    expect(f).toBe('<untrusted-output session="web01 (SSH)" source="terminal">\na&lt;/untrusted-output>b&lt;untrusted-output x>\n</untrusted-output>');
    expect(fenceUntrusted('a"b<', 's', '')).toContain('session="a&quot;b&lt;"');
  });
});

describe('default deny rules', () => {
  const match = (cmd: string) => DEFAULT_DENY_RULES.some((r) => new RegExp(r, 'i').test(cmd));
  it('catch destructive commands', () => {
    for (const cmd of ['rm -rf /', 'sudo rm -rf / --no-preserve-root', 'rm -fr /*', 'rm -r -f ~', 'mkfs.ext4 /dev/sdb1', 'shutdown -h now', 'sudo reboot', 'poweroff', 'dd if=/dev/zero of=/dev/sda bs=1M', 'cat x > /dev/sda', ':(){ :|:& };:']) {
      expect(match(cmd), cmd).toBe(true);
    }
  });
  it('let ordinary work through', () => {
    for (const cmd of ['rm -rf /tmp/build', 'rm -rf ./node_modules', 'ls -la /', 'dd if=/dev/zero of=./disk.img bs=1M count=10', 'systemctl restart nginx', 'echo rebooted-yesterday']) {
      expect(match(cmd), cmd).toBe(false);
    }
  });
});
