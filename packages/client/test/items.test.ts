import { describe, expect, it } from 'vitest';
import { formatItemRef, parseItemRef } from '../src/index.js';

describe('item references', () => {
  it('parses type:id whatever the case of the type, and formats back', () => {
    expect(parseItemRef('folder:12')).toEqual({ type: 'FOLDER', id: 12 });
    expect(parseItemRef('Workbook:7')).toEqual({ type: 'WORKBOOK', id: 7 });
    expect(parseItemRef('REPORT:9007199254740991')).toEqual({ type: 'REPORT', id: Number.MAX_SAFE_INTEGER });
    expect(formatItemRef({ type: 'REPORT', id: 3 })).toBe('report:3');
    expect(parseItemRef(formatItemRef({ type: 'FOLDER', id: 44 }))).toEqual({ type: 'FOLDER', id: 44 });
  });

  it('refuses anything else with a TypeError that says what was expected', () => {
    for (const bad of ['dashboard:1', 'folder:0', 'folder:-1', 'folder:1.5', 'folder:', ':3', 'folder 3', 'folder:9007199254740993', '']) {
      expect(() => parseItemRef(bad), bad).toThrow(TypeError);
    }
    expect(() => parseItemRef('dashboard:1')).toThrow(/folder, workbook or report/);
    expect(() => parseItemRef('folder:0')).toThrow(/positive integer/);
  });
});
