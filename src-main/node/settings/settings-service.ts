import { DEFAULT_SETTINGS, SETTING_KEYS, SettingsSchema, type Settings } from '../../common/contract/settings.js';
import type { Db } from '../db/database.js';

/** User settings as JSON values per key; defaults come from the contract's schema. */
export class SettingsService {
  /**
   * `onChanged` hears every set with all the settings after it: each window keeps its own copy
   * (its terminals draw from it), and one that never heard of a change sent its stale values back.
   */
  constructor(
    private readonly db: Db,
    private readonly onChanged: (settings: Settings) => void = () => undefined,
  ) {}

  get(): Settings {
    const stored: Record<string, unknown> = {};
    for (const row of this.db.prepare('SELECT key, value FROM settings').all() as { key: string; value: string }[]) {
      if ((SETTING_KEYS as string[]).includes(row.key)) stored[row.key] = JSON.parse(row.value);
    }
    // A stored value that no longer fits (e.g. a narrowed range, a blank font family saved before
    // blanks were refused) falls back to its own default; the other settings stay as they were.
    const out: Record<string, unknown> = { ...DEFAULT_SETTINGS };
    for (const key of SETTING_KEYS) {
      if (!(key in stored)) continue;
      const parsed = SettingsSchema.shape[key].safeParse(stored[key]);
      if (parsed.success) out[key] = parsed.data;
    }
    return SettingsSchema.parse(out);
  }

  set(patch: Partial<Settings>): Settings {
    const put = this.db.prepare(
      'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
    );
    this.db.transaction(() => {
      for (const [k, v] of Object.entries(patch)) if (v !== undefined) put.run(k, JSON.stringify(v));
    })();
    const settings = this.get();
    if (Object.values(patch).some((v) => v !== undefined)) this.onChanged(settings);
    return settings;
  }
}
