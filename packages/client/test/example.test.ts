import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT } from '../../server/test/harness.js';
import { runTs } from '../../server/test/server-env.js';
import { unwrap } from '../src/node.js';
import { startTestServer, Workspace, type TestServer } from './support.js';

/** Step 5 of the README's five-minute path runs this example as a user would: through the package's own entry. */
describe.each(STORE_INDEPENDENT)('examples/reorganise.ts [%s]', (dialect) => {
  let server: TestServer;
  let caFile: string;
  beforeAll(async () => {
    server = await startTestServer(dialect);
    caFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-example-')), 'ca.crt');
    fs.writeFileSync(caFile, server.ca);
  });
  afterAll(async () => {
    await server.close();
    fs.rmSync(path.dirname(caFile), { recursive: true, force: true });
  });

  it('moves every workbook and report whose name matches into a new folder and reports the outcome', async () => {
    const w = await Workspace.create(server.client());
    const elsewhere = await w.folder('Old place');
    const put = async (slug: string, name: string, folderId: number | null) =>
      unwrap(
        await w.client.PUT('/api/v1/deployments/{deploymentId}/workbooks/by-slug/{slug}', {
          params: { path: { deploymentId: w.deploymentId, slug } },
          body: { name, folderId },
        }),
      ).id;
    const q1 = await put('q1', 'Revenue q1', null);
    const q2 = await put('q2', 'Revenue q2', elsewhere);
    const other = await put('costs', 'Costs', null);

    const run = await runTs('packages/client/examples/reorganise.ts', [String(w.deploymentId), 'revenue', 'Revenue by quarter'], {
      MAPI_URL: server.url,
      MAPI_TOKEN: server.token,
      MAPI_CA_CERT: caFile,
    });
    expect(run.code, run.stderr).toBe(0);
    const folders: { id: number; name: string }[] = [];
    for await (const folder of w.client.folders.list(w.deploymentId, { parentId: 'root' })) folders.push(folder);
    const created = folders.find((f) => f.name === 'Revenue by quarter');
    expect(created).toBeDefined();
    expect(run.stdout).toContain(`moved 2 item(s) into "Revenue by quarter" (folder ${created?.id}) in 1 request(s)`);
    const tree = await w.tree();
    expect(tree.get(`workbook:${q1}`)).toBe(created?.id);
    expect(tree.get(`workbook:${q2}`)).toBe(created?.id);
    expect(tree.get(`workbook:${other}`)).toBeNull();
  });
});
