import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { parseItemList } from '../src/items.js';

/** How stdin becomes items, whatever editor or tool wrote it. */

describe('parseItemList', () => {
  const refs = [
    { type: 'FOLDER', id: 3 },
    { type: 'WORKBOOK', id: 5 },
  ];

  it('reads TYPE:ID lines with a UTF-8 byte order mark and CRLF line ends', () => {
    expect(parseItemList('\uFEFFfolder:3\r\n# comment\r\n\r\nworkbook:5\r\n')).toEqual(refs);
    expect(parseItemList('folder:3\r\nworkbook:5')).toEqual(refs);
  });

  it('reads a JSON array with a byte order mark and CRLF line ends', () => {
    expect(parseItemList('\uFEFF[\r\n  "folder:3",\r\n  {"type": "workbook", "id": 5}\r\n]\r\n')).toEqual(refs);
  });

  it('counts lines for errors the same with CRLF line ends', () => {
    expect(() => parseItemList('\uFEFFfolder:3\r\nworkbook:x\r\n')).toThrow(/^stdin line 2: /);
  });

  it('refuses a JSON object, as move --json prints, saying what it expected and what to pipe instead', () => {
    const result = JSON.stringify({ moved: [{ type: 'WORKBOOK', id: 5 }], failed: [], skipped: [], requests: 1 });
    for (const text of [result, `\uFEFF  ${result}\r\n`]) {
      const error = (() => {
        try {
          parseItemList(text, 'stdin', 7);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).message).toBe('stdin holds a JSON object; expected a JSON array of items, or TYPE:ID lines.');
      expect((error as UsageError).hint).toContain('`mapi workspace ls 7 root --refs`');
    }
  });
});
