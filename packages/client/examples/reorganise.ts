/**
 * Moves every workbook and report whose name contains a word into one folder, creating the folder
 * if needed, and says exactly what failed.
 *
 *   MAPI_URL=https://localhost:8443 MAPI_TOKEN=mapi_… MAPI_CA_CERT=data/tls/localhost.crt \
 *     npx tsx packages/client/examples/reorganise.ts <deploymentId> <word> <folder name>
 */
import fs from 'node:fs';
import { createClient, unwrap, type ItemRef } from '@mapi/client';

const [deploymentArg, word, folderName] = process.argv.slice(2);
if (!deploymentArg || !word || !folderName || !process.env.MAPI_TOKEN) {
  console.error('usage: MAPI_URL=… MAPI_TOKEN=… [MAPI_CA_CERT=…] reorganise.ts <deploymentId> <word> <folder name>');
  process.exit(1);
}
const deploymentId = Number(deploymentArg);

const mapi = createClient({
  baseUrl: process.env.MAPI_URL ?? 'https://localhost:8443',
  token: process.env.MAPI_TOKEN,
  ...(process.env.MAPI_CA_CERT ? { ca: fs.readFileSync(process.env.MAPI_CA_CERT, 'utf8') } : {}),
});

// The destination: an existing top-level folder of that name, or a new one.
let folderId: number | undefined;
for await (const folder of mapi.folders.list(deploymentId, { parentId: 'root' })) {
  if (folder.name === folderName) folderId = folder.id;
}
folderId ??= unwrap(await mapi.POST('/api/v1/deployments/{deploymentId}/folders', { params: { path: { deploymentId } }, body: { name: folderName } })).id;

// Every matching workbook and report, wherever it is (search covers the whole workspace).
const items: ItemRef[] = [];
for await (const entry of mapi.workspace.list(deploymentId, { search: word, types: ['WORKBOOK', 'REPORT'] })) {
  items.push({ type: entry.type, id: entry.id });
}

const result = await mapi.bulkMove(deploymentId, items, folderId, {
  onProgress: (p) => console.log(`sent ${p.done}/${p.total}: ${p.moved} moved, ${p.failed} failed`),
});
console.log(`moved ${result.moved.length} item(s) into "${folderName}" (folder ${folderId}) in ${result.requests} request(s)`);
for (const failure of result.failed) console.log(`failed ${failure.type.toLowerCase()}:${failure.id}: ${failure.error.status} ${failure.error.message}`);
process.exitCode = result.failed.length === 0 ? 0 : 2;
