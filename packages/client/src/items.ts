/** The kinds of workspace item the bulk endpoints take. */
export type ItemType = 'FOLDER' | 'WORKBOOK' | 'REPORT';

export interface ItemRef {
  type: ItemType;
  id: number;
}

const ITEM_TYPES: readonly ItemType[] = ['FOLDER', 'WORKBOOK', 'REPORT'];
const REF_PATTERN = /^([a-z]+):(\d+)$/i;

/** `folder:12` -> `{ type: 'FOLDER', id: 12 }`: the spelling scripts and the CLI accept. */
export function parseItemRef(text: string): ItemRef {
  const match = REF_PATTERN.exec(text.trim());
  const type = match?.[1]?.toUpperCase();
  if (!match || !ITEM_TYPES.includes(type as ItemType)) {
    throw new TypeError(`Invalid item reference "${text}": expected <type>:<id> with type folder, workbook or report, e.g. "folder:12".`);
  }
  const id = Number(match[2]);
  if (!Number.isSafeInteger(id) || id < 1) {
    throw new TypeError(`Invalid item reference "${text}": the id must be a positive integer.`);
  }
  return { type: type as ItemType, id };
}

export function formatItemRef(ref: ItemRef): string {
  return `${ref.type.toLowerCase()}:${ref.id}`;
}

/**
 * Checks every reference before anything is sent, so a typo fails the whole job up front
 * instead of surfacing as a request-level 400 half-way through.
 */
export function checkItemRef(ref: ItemRef): ItemRef {
  if (!ITEM_TYPES.includes(ref?.type) || !Number.isSafeInteger(ref.id) || ref.id < 1) {
    throw new TypeError(`Invalid item reference ${JSON.stringify(ref)}: expected { type: 'FOLDER' | 'WORKBOOK' | 'REPORT', id: positive integer }.`);
  }
  return { type: ref.type, id: ref.id };
}

/** Distinct references in first-seen order; the server collapses repeats too, but only within one request. */
export function distinctRefs(items: Iterable<ItemRef>): ItemRef[] {
  const seen = new Set<string>();
  const refs: ItemRef[] = [];
  for (const item of items) {
    const ref = checkItemRef(item);
    const key = formatItemRef(ref);
    if (seen.has(key)) continue;
    seen.add(key);
    refs.push(ref);
  }
  return refs;
}
