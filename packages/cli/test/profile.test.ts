import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { checkProfileWritable } from '../src/profile.js';
import { removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

describe('checkProfileWritable', () => {
  it('accepts a directory that does not exist yet under one that can be written, and creates nothing', () => {
    const base = tempDir();
    const file = path.join(base, 'a', 'b', 'config.json');
    expect(() => checkProfileWritable(file)).not.toThrow();
    expect(fs.existsSync(path.join(base, 'a'))).toBe(false);
  });

  it('refuses a place under a file with the path and a hint naming MAPI_CONFIG_DIR', () => {
    const blocker = path.join(tempDir(), 'a-file');
    fs.writeFileSync(blocker, '');
    const file = path.join(blocker, 'mapi', 'config.json');
    expect(() => checkProfileWritable(file)).toThrow(UsageError);
    expect(() => checkProfileWritable(file)).toThrow(`Cannot save the profile to ${file}: ${blocker} is not a directory`);
    try {
      checkProfileWritable(file);
    } catch (error) {
      expect((error as UsageError).hint).toContain('MAPI_CONFIG_DIR');
    }
  });
});
