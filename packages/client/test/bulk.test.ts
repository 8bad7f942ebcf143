import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { BulkInterruptedError, type BulkDeleteResult, type BulkProgress, type ItemRef, type MapiClient } from '../src/node.js';
import { folderRef, key, reportRef, startTestServer, Workspace, workbookRef, type TestServer } from './support.js';

describe.each(STORE_INDEPENDENT)('bulk jobs (%s)', (dialect) => {
  let server: TestServer;
  let client: MapiClient;
  beforeAll(async () => {
    server = await startTestServer(dialect);
    client = server.client();
  });
  afterAll(async () => server?.close());

  describe('bulkMove', () => {
    it('moves 250 items in three requests, in order, de-duplicated, with failures in every chunk reported as the server did', async () => {
      const ws = await Workspace.create(client);
      const other = await Workspace.create(client);
      const top1 = await ws.folder();
      const top2 = await ws.folder(undefined, top1);
      const dest = await ws.folder(undefined, top2);
      const movable: ItemRef[] = [
        ...(await ws.many(151, () => ws.workbook())).map(workbookRef),
        ...(await ws.many(50, () => ws.report())).map(reportRef),
        ...(await ws.many(40, () => ws.folder())).map(folderRef),
      ];
      const foreign = (await other.many(3, () => other.workbook())).map(workbookRef);
      // Three failures in each chunk of 100: a folder into its own descendant (or itself), an item
      // that does not exist, an item of another deployment.
      const failing: Array<[number, ItemRef, number]> = [
        [10, folderRef(top1), 400],
        [50, workbookRef(900_001), 404],
        [90, foreign[0] as ItemRef, 404],
        [120, folderRef(top2), 400],
        [150, foreign[1] as ItemRef, 404],
        [199, reportRef(900_002), 404],
        [210, folderRef(dest), 400],
        [230, folderRef(900_003), 404],
        [249, foreign[2] as ItemRef, 404],
      ];
      const distinct = [...movable];
      for (const [at, ref] of failing) distinct.splice(at, 0, ref);
      expect(distinct).toHaveLength(250);
      // 60 repeats, of successes and failures, spread through the list: 310 references in all.
      const requested = distinct.flatMap((ref, i) => (i % 4 === 3 && i < 240 ? [ref, distinct[i - 3] as ItemRef] : [ref]));
      expect(requested).toHaveLength(310);
      const before = await ws.tree();

      const progress: BulkProgress[] = [];
      const result = await client.bulkMove(ws.deploymentId, requested, dest, { onProgress: (p) => progress.push(p) });

      const failingKeys = new Set(failing.map(([, ref]) => key(ref)));
      const expectedMoved = distinct.filter((ref) => !failingKeys.has(key(ref)));
      expect(result.requests).toBe(3);
      expect(result.moved.map(key)).toEqual(expectedMoved.map(key));
      expect(result.moved.every((m) => m.folderId === dest)).toBe(true);
      expect(result.failed.map((f) => [key(f), f.error.status])).toEqual(failing.map(([, ref, status]) => [key(ref), status]));
      expect(result.failed.every((f) => f.error.message.length > 0)).toBe(true);
      expect(result.skipped).toEqual([]);

      const after = await ws.tree();
      for (const ref of expectedMoved) expect(after.get(key(ref)), key(ref)).toBe(dest);
      for (const ref of [folderRef(top1), folderRef(top2), folderRef(dest)]) expect(after.get(key(ref))).toBe(before.get(key(ref)));
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
      const otherTree = await other.tree();
      for (const ref of foreign) expect(otherTree.get(key(ref))).toBeNull();

      expect(progress).toEqual([
        { total: 250, done: 0, moved: 0, failed: 0, skipped: 0, requests: 0 },
        { total: 250, done: 100, moved: 97, failed: 3, skipped: 0, requests: 1 },
        { total: 250, done: 200, moved: 194, failed: 6, skipped: 0, requests: 2 },
        { total: 250, done: 250, moved: 241, failed: 9, skipped: 0, requests: 3 },
      ]);
    });

    it('moves to the workspace root with folderId null, in chunks of the size asked for', async () => {
      const ws = await Workspace.create(client);
      const folder = await ws.folder();
      const items = (await ws.many(5, () => ws.workbook(folder))).map(workbookRef);
      const result = await client.bulkMove(ws.deploymentId, items, null, { chunkSize: 2 });
      expect(result.requests).toBe(3);
      expect(result.moved.map(key)).toEqual(items.map(key));
      const tree = await ws.tree();
      for (const ref of items) expect(tree.get(key(ref))).toBeNull();
    });

    it('refuses bad references and chunk sizes before sending anything', async () => {
      const ws = await Workspace.create(client);
      const wb = await ws.workbook();
      const bad = [workbookRef(wb), { type: 'DASHBOARD', id: 1 } as unknown as ItemRef];
      await expect(client.bulkMove(ws.deploymentId, bad, null)).rejects.toThrow(TypeError);
      await expect(client.bulkMove(ws.deploymentId, [workbookRef(wb), workbookRef(0)], null)).rejects.toThrow(/positive integer/);
      await expect(client.bulkMove(ws.deploymentId, [workbookRef(wb)], null, { chunkSize: 101 })).rejects.toThrow(RangeError);
      const empty = await client.bulkMove(ws.deploymentId, [], null);
      expect(empty).toEqual({ moved: [], failed: [], skipped: [], requests: 0 });
    });

    it('a request refused whole (429 beyond the wait it may take) leaves its chunk pending, not unconfirmed', async () => {
      const ws = await Workspace.create(client);
      const dest = await ws.folder();
      const items = (await ws.many(6, () => ws.workbook())).map(workbookRef);
      const limited = server.client();
      let bulkRequests = 0;
      // The second bulk request is answered the way a rate limiter answers, before the server sees it.
      limited.use({
        onRequest: ({ request }) => {
          if (!request.url.endsWith('/workspace/bulk-move') || ++bulkRequests !== 2) return undefined;
          const problem = {
            type: 'about:blank',
            title: 'Too Many Requests',
            status: 429,
            detail: 'Slow down.',
            code: 'RATE_LIMITED',
            message: 'Slow down.',
            requestId: 'r-1',
          };
          return new Response(JSON.stringify(problem), { status: 429, headers: { 'content-type': 'application/problem+json', 'retry-after': '3600' } });
        },
      });
      const failure = await limited.bulkMove(ws.deploymentId, items, dest, { chunkSize: 2 }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(BulkInterruptedError);
      const stopped = failure as BulkInterruptedError;
      expect(stopped.name).toBe('BulkInterruptedError');
      expect(stopped.cause).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
      expect(stopped.unconfirmed).toEqual([]);
      expect(stopped.pending).toEqual(items.slice(2));
      const tree = await ws.tree();
      expect(items.map((r) => tree.get(key(r)))).toEqual([dest, dest, null, null, null, null]);
    });

    it('stops between chunks when aborted: what was applied is recorded, the rest pending and untouched', async () => {
      const ws = await Workspace.create(client);
      const dest = await ws.folder();
      const items = (await ws.many(12, () => ws.workbook())).map(workbookRef);
      const controller = new AbortController();
      const failure = await client
        .bulkMove(ws.deploymentId, items, dest, {
          chunkSize: 5,
          signal: controller.signal,
          onProgress: (p) => {
            if (p.requests === 1) controller.abort();
          },
        })
        .catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(BulkInterruptedError);
      const interrupted = failure as BulkInterruptedError;
      expect(interrupted.name).toBe('AbortError');
      expect(interrupted.result).toEqual({ moved: expect.any(Array), failed: [], skipped: [], requests: 1 });
      expect((interrupted.result as { moved: ItemRef[] }).moved.map(key)).toEqual(items.slice(0, 5).map(key));
      expect(interrupted.pending).toEqual(items.slice(5));
      expect(interrupted.unconfirmed).toEqual([]);
      const tree = await ws.tree();
      for (const ref of items.slice(0, 5)) expect(tree.get(key(ref))).toBe(dest);
      for (const ref of items.slice(5)) expect(tree.get(key(ref))).toBeNull();

      const already = await client.bulkMove(ws.deploymentId, items, dest, { signal: AbortSignal.abort() }).catch((error: unknown) => error);
      expect(already).toMatchObject({ name: 'AbortError', pending: items, result: { requests: 0, moved: [] } });
    });

    describe('keepSubtrees', () => {
      /** P > (S1 > S1a > W2), (S2 > R1), W1; X at the root; D the destination. Children come before their parents in the batch. */
      async function subtree(ws: Workspace) {
        const d = await ws.folder();
        const p = await ws.folder();
        const s1 = await ws.folder(undefined, p);
        const s1a = await ws.folder(undefined, s1);
        const s2 = await ws.folder(undefined, p);
        const w1 = await ws.workbook(p);
        const w2 = await ws.workbook(s1a);
        const r1 = await ws.report(s2);
        const x = await ws.workbook();
        const batch = [folderRef(s1), workbookRef(w2), folderRef(p), folderRef(s1a), reportRef(r1), folderRef(s2), workbookRef(w1), workbookRef(x)];
        return { d, p, s1, s1a, s2, w1, w2, r1, x, batch };
      }

      it('moves a selected folder with its contents intact and reports the contents as skipped', async () => {
        const ws = await Workspace.create(client);
        const t = await subtree(ws);
        const progress: BulkProgress[] = [];
        const result = await client.bulkMove(ws.deploymentId, t.batch, t.d, { keepSubtrees: true, onProgress: (p) => progress.push(p) });
        expect(result.moved.map(key)).toEqual([`folder:${t.p}`, `workbook:${t.x}`]);
        expect(result.failed).toEqual([]);
        const skippedRefs = t.batch.filter((r) => r.id !== t.p && r.id !== t.x);
        expect(result.skipped).toEqual(skippedRefs.map((r) => ({ ...r, ancestorFolderId: t.p })));
        expect(result.requests).toBe(1);
        expect(progress.at(-1)).toEqual({ total: 2, done: 2, moved: 2, failed: 0, skipped: 6, requests: 1 });

        const tree = await ws.tree();
        expect(Object.fromEntries([t.p, t.s1, t.s1a, t.s2].map((id) => [id, tree.get(`folder:${id}`)]))).toEqual({
          [t.p]: t.d,
          [t.s1]: t.p,
          [t.s1a]: t.s1,
          [t.s2]: t.p,
        });
        expect([tree.get(`workbook:${t.w1}`), tree.get(`workbook:${t.w2}`), tree.get(`report:${t.r1}`), tree.get(`workbook:${t.x}`)]).toEqual([
          t.p,
          t.s1a,
          t.s2,
          t.d,
        ]);
      });

      it('sends the contents itself when their folder cannot move, so nothing listed is left behind unreported', async () => {
        const ws = await Workspace.create(client);
        const t = await subtree(ws);
        // The destination S1a lies inside P and S1, so neither can move there (400), nor S1a into itself.
        // Rounds: P, X | S1, S2, W1 (P did not move) | S1a (S1 did not move) | W2 (S1a did not move).
        const dest = t.s1a;
        const progress: BulkProgress[] = [];
        const result = await client.bulkMove(ws.deploymentId, t.batch, dest, { keepSubtrees: true, onProgress: (p) => progress.push(p) });
        const failedKeys = result.failed.map(key);
        expect(failedKeys).toEqual([`folder:${t.p}`, `folder:${t.s1}`, `folder:${t.s1a}`]);
        for (const f of result.failed) expect(f.error.status).toBe(400);
        expect(result.moved.map(key)).toEqual([`workbook:${t.x}`, `folder:${t.s2}`, `workbook:${t.w1}`, `workbook:${t.w2}`]);
        // R1 travelled with S2, the only folder that moved.
        expect(result.skipped).toEqual([{ type: 'REPORT', id: t.r1, ancestorFolderId: t.s2 }]);
        expect(progress.at(-1)).toMatchObject({ total: 7, done: 7, moved: 4, failed: 3, skipped: 1 });
        for (const p of progress) expect(p.done).toBeLessThanOrEqual(p.total);

        const tree = await ws.tree();
        expect(tree.get(`folder:${t.p}`)).toBeNull();
        expect(tree.get(`folder:${t.s2}`)).toBe(dest);
        expect(tree.get(`report:${t.r1}`)).toBe(t.s2);
        expect(tree.get(`workbook:${t.w1}`)).toBe(dest);
        expect(tree.get(`workbook:${t.w2}`)).toBe(dest);
      });

      it('names the outermost folder that moved when nested selected folders all move', async () => {
        const ws = await Workspace.create(client);
        const t = await subtree(ws);
        const result = await client.bulkMove(ws.deploymentId, [folderRef(t.s1a), folderRef(t.s1), workbookRef(t.w2), folderRef(t.p)], t.d, {
          keepSubtrees: true,
        });
        expect(result.moved.map(key)).toEqual([`folder:${t.p}`]);
        expect(result.skipped).toEqual([
          { type: 'FOLDER', id: t.s1a, ancestorFolderId: t.p },
          { type: 'FOLDER', id: t.s1, ancestorFolderId: t.p },
          { type: 'WORKBOOK', id: t.w2, ancestorFolderId: t.p },
        ]);
      });

      it('sends every item when the folder list it read was inconsistent (a cycle), rather than losing them', async () => {
        const ws = await Workspace.create(client);
        const dest = await ws.folder();
        const f1 = await ws.folder();
        const f2 = await ws.folder(undefined, f1);
        const w = await ws.workbook(f2);
        // As if F1 had been moved into F2 while the pages of the folder list were being read.
        const skewed = server.client();
        skewed.use({
          async onResponse({ request, response }) {
            if (request.method !== 'GET' || !new URL(request.url).pathname.endsWith('/folders')) return undefined;
            const page = await response.clone().json();
            for (const folder of page.items) if (folder.id === f1) folder.parentId = f2;
            return new Response(JSON.stringify(page), { status: 200, headers: { 'content-type': 'application/json' } });
          },
        });
        const batch = [folderRef(f1), folderRef(f2), workbookRef(w)];
        const result = await skewed.bulkMove(ws.deploymentId, batch, dest, { keepSubtrees: true });
        expect([...result.moved.map(key), ...result.failed.map(key), ...result.skipped.map(key)].sort()).toEqual(batch.map(key).sort());
        expect(result.moved.map(key)).toEqual(batch.map(key));
      });

      it('without the option, flattens everything selected into the destination', async () => {
        const ws = await Workspace.create(client);
        const t = await subtree(ws);
        const result = await client.bulkMove(ws.deploymentId, t.batch, t.d);
        expect(result.moved.map(key)).toEqual(t.batch.map(key));
        expect(result.skipped).toEqual([]);
        const tree = await ws.tree();
        for (const ref of t.batch) expect(tree.get(key(ref)), key(ref)).toBe(t.d);
      });

      it('reads nothing when the batch holds no folder', async () => {
        const ws = await Workspace.create(client);
        const dest = await ws.folder();
        const items = [workbookRef(await ws.workbook()), reportRef(await ws.report())];
        const paths: string[] = [];
        const watched = server.client();
        watched.use({ onRequest: ({ request }) => void paths.push(`${request.method} ${new URL(request.url).pathname}`) });
        const result = await watched.bulkMove(ws.deploymentId, items, dest, { keepSubtrees: true });
        expect(result.moved.map(key)).toEqual(items.map(key));
        expect(paths).toEqual([`POST /api/v1/deployments/${ws.deploymentId}/workspace/bulk-move`]);
      });
    });
  });

  describe('bulkDelete', () => {
    it('deletes in order and in chunks, de-duplicated, recording what the server deleted and refused', async () => {
      const ws = await Workspace.create(client);
      const parent = await ws.folder();
      const child = await ws.folder(undefined, parent);
      const emptied = await ws.folder();
      const inEmptied = await ws.workbook(emptied);
      const [wb1, wb2] = await ws.many(2, () => ws.workbook());
      const rp1 = await ws.report();
      const items = [
        workbookRef(wb1 as number),
        folderRef(parent), // still has a subfolder: refused
        workbookRef(wb2 as number),
        workbookRef(wb1 as number),
        reportRef(900_001), // does not exist
        reportRef(rp1),
        folderRef(emptied),
        folderRef(parent),
      ];
      const progress: BulkProgress[] = [];
      const result = await client.bulkDelete(ws.deploymentId, items, { chunkSize: 2, onProgress: (p) => progress.push(p) });

      expect(result.requests).toBe(3);
      expect(result.deleted.map(key)).toEqual([`workbook:${wb1}`, `workbook:${wb2}`, `report:${rp1}`, `folder:${emptied}`]);
      expect(result.failed.map((f) => [key(f), f.error.status])).toEqual([
        [`folder:${parent}`, 400],
        ['report:900001', 404],
      ]);
      expect(progress.map((p) => [p.done, p.moved, p.deleted, p.failed, p.requests])).toEqual([
        [0, 0, 0, 0, 0],
        [2, 1, 1, 1, 1],
        [4, 2, 2, 2, 2],
        [6, 4, 4, 2, 3],
      ]);
      expect(progress.every((p) => p.total === 6 && p.skipped === 0)).toBe(true);

      const tree = await ws.tree();
      expect([...tree.keys()].sort()).toEqual([`folder:${parent}`, `folder:${child}`, `workbook:${inEmptied}`].sort());
      // A deleted folder's workbooks move to the root.
      expect(tree.get(`workbook:${inEmptied}`)).toBeNull();
    });

    it('stops between chunks when aborted, and deletes nothing it did not report', async () => {
      const ws = await Workspace.create(client);
      const items = (await ws.many(6, () => ws.workbook())).map(workbookRef);
      const controller = new AbortController();
      const failure = await client
        .bulkDelete(ws.deploymentId, items, {
          chunkSize: 4,
          signal: controller.signal,
          onProgress: (p) => p.requests === 1 && controller.abort(),
        })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(BulkInterruptedError);
      const { name, result, pending } = failure as BulkInterruptedError<BulkDeleteResult>;
      expect(name).toBe('AbortError');
      expect(result).toEqual({ deleted: items.slice(0, 4), failed: [], requests: 1 });
      expect(pending).toEqual(items.slice(4));
      const tree = await ws.tree();
      expect([...tree.keys()].sort()).toEqual(items.slice(4).map(key).sort());
    });
  });
});
