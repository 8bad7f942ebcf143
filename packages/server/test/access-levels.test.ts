import { describe, expect, it } from 'vitest';
import { atLeast, effectiveAccess, grantKey, higher, type GrantIndex, type Subject } from '../src/access/levels.js';
import type { Access } from '../src/db/tables.js';

/** DESIGN.md, "Roles and access": the pure rule every access check in the server goes through. */

const grants = (entries: Array<[string, Access]>): GrantIndex => new Map(entries);
const user = (role: Subject['role'], userId = 7): Subject => ({ userId, role });
const deployment = 3;

describe('access levels', () => {
  it('orders VIEW < EDIT < MANAGE, and nothing satisfies no access', () => {
    expect(atLeast('MANAGE', 'EDIT')).toBe(true);
    expect(atLeast('EDIT', 'EDIT')).toBe(true);
    expect(atLeast('VIEW', 'EDIT')).toBe(false);
    expect(atLeast(null, 'VIEW')).toBe(false);
    expect(higher('VIEW', 'MANAGE')).toBe('MANAGE');
    expect(higher(null, 'EDIT')).toBe('EDIT');
    expect(higher(null, null)).toBeNull();
  });

  it('gives an admin MANAGE on anything, with no grant at all', () => {
    expect(effectiveAccess(user('ADMIN'), grants([]), { deploymentId: deployment, chain: [] })).toBe('MANAGE');
  });

  it('gives the creator MANAGE on what they created', () => {
    expect(effectiveAccess(user('EXPLORER'), grants([]), { deploymentId: deployment, chain: [], createdBy: 7 })).toBe('MANAGE');
    expect(effectiveAccess(user('EXPLORER'), grants([]), { deploymentId: deployment, chain: [], createdBy: 8 })).toBeNull();
  });

  it('gives the creator of a deployment MANAGE on everything inside it, capped by role', () => {
    const inside = { deploymentId: deployment, chain: [{ type: 'WORKBOOK' as const, id: 5 }], createdBy: 8, deploymentCreatedBy: 7 };
    expect(effectiveAccess(user('DEVELOPER'), grants([]), inside)).toBe('MANAGE');
    expect(effectiveAccess(user('VIEWER'), grants([]), inside)).toBe('VIEW');
    expect(effectiveAccess(user('DEVELOPER', 9), grants([]), inside)).toBeNull();
  });

  it('gives nothing without a grant or ownership', () => {
    expect(effectiveAccess(user('DEVELOPER'), grants([['DEPLOYMENT:4', 'MANAGE']]), { deploymentId: deployment, chain: [], createdBy: null })).toBeNull();
  });

  it('applies a grant on the deployment itself', () => {
    expect(effectiveAccess(user('EXPLORER'), grants([['DEPLOYMENT:3', 'EDIT']]), { deploymentId: deployment, chain: [] })).toBe('EDIT');
  });

  it('takes the highest of the resource, the folders above it and its deployment', () => {
    const index = grants([
      [grantKey({ type: 'REPORT', id: 10 }), 'VIEW'],
      [grantKey({ type: 'FOLDER', id: 20 }), 'MANAGE'],
      [grantKey({ type: 'DEPLOYMENT', id: deployment }), 'EDIT'],
    ]);
    const chain = [
      { type: 'REPORT' as const, id: 10 },
      { type: 'FOLDER' as const, id: 21 },
      { type: 'FOLDER' as const, id: 20 },
    ];
    expect(effectiveAccess(user('EXPLORER'), index, { deploymentId: deployment, chain })).toBe('MANAGE');
    expect(effectiveAccess(user('EXPLORER'), index, { deploymentId: deployment, chain: chain.slice(0, 2) })).toBe('EDIT');
  });

  it('does not confuse resources of different types that share an id', () => {
    const index = grants([[grantKey({ type: 'FOLDER', id: 3 }), 'MANAGE']]);
    expect(effectiveAccess(user('EXPLORER'), index, { deploymentId: 3, chain: [{ type: 'WORKBOOK', id: 3 }] })).toBeNull();
  });

  it('caps a VIEWER at VIEW, whatever the grant or ownership', () => {
    expect(effectiveAccess(user('VIEWER'), grants([['DEPLOYMENT:3', 'MANAGE']]), { deploymentId: deployment, chain: [] })).toBe('VIEW');
    expect(effectiveAccess(user('VIEWER'), grants([]), { deploymentId: deployment, chain: [], createdBy: 7 })).toBe('VIEW');
    expect(effectiveAccess(user('VIEWER'), grants([]), { deploymentId: deployment, chain: [] })).toBeNull();
  });

  it('lets DEVELOPER and EXPLORER hold full access when granted', () => {
    for (const role of ['DEVELOPER', 'EXPLORER'] as const) {
      expect(effectiveAccess(user(role), grants([['DEPLOYMENT:3', 'MANAGE']]), { deploymentId: deployment, chain: [] })).toBe('MANAGE');
    }
  });
});
