/**
 * `npm run conformance:scim`: runs the identity providers' own SCIM test material against this
 * server. Each suite gets a server of its own on a fresh SQLite store over HTTPS:
 *   - Okta's "SCIM 2.0 SPEC Test", after provisioning the one user
 *     its first step reads; every step must pass.
 *   - Microsoft's SCIM reference Postman collection, through newman, on an empty SCIM store. Its
 *     failures are compared with KNOWN_DIFFERENCES, the behaviours of that reference server that
 *     RFC 7644 does not require (each with the section that allows ours); any other failure fails.
 * Prints each suite's pass/fail counts; exits 1 when Okta fails or an unexplained failure appears.
 * The material is third-party and not in this repository: SCIM_CONFORMANCE_DIR names the directory
 * holding it (MATERIAL_FILES; docs/maintainers/conformance.md says where each file comes from).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateApiKey } from '../src/areas/api-keys/key-format.js';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');
const material = path.resolve(process.env.SCIM_CONFORMANCE_DIR ?? path.join(repoRoot, '..', 'shared', 'conformance', 'scim'));
/** What the run needs in SCIM_CONFORMANCE_DIR. */
const MATERIAL_FILES = ['okta-scim20-spec-test.json', 'run-okta-spec-test.mjs', 'microsoft-scim-reference.postman.json'];

/** Microsoft collection assertions that fail on purpose, keyed "request name / assertion name". */
export const KNOWN_DIFFERENCES: Record<string, string> = {
  'Get empty Users / Status code is 200':
    "The request goes to /users in lower case (the collection's path parts differ from its raw URL); RFC 7644 section 3.2 names the endpoint /Users and URL paths are case-sensitive (RFC 3986 section 6.2.2.1), so it is 404.",
  'Get ServiceProviderConfig / Status code is 200':
    "The collection asks for /serviceConfiguration, that server's own alias; RFC 7644 section 4 names the endpoint /ServiceProviderConfig, which this server serves.",
  'Get ServiceProviderConfig / Pach supported is true': 'Same request as above: /serviceConfiguration is not an RFC 7644 endpoint (section 4).',
  'Patch user omalley new username / Status code is 204':
    'RFC 7644 section 3.5.2 allows 200 with the resource or 204; this server answers 200 with the resource, so the client sees the result and its new version.',
  'patch user omalley active with boolean / Status code is 204': 'As above: 200 with the resource is the other answer RFC 7644 section 3.5.2 allows.',
  'Get group by id / Body contians user':
    'Asserts the member `display` the client sent ("new User"); RFC 7643 section 4.2 makes `display` a read-only description, which this server fills with the member\'s own displayName or userName.',
  'filter eq and (val or val) / Total results':
    'The filter compares with unquoted words (`eq Employee`); RFC 7644 section 3.4.2.2 requires compValue to be a JSON value (a quoted string), so the server answers 400 invalidFilter.',
  'filter starts with / Total results': 'Unquoted comparison value (`sw O`): 400 invalidFilter per RFC 7644 section 3.4.2.2.',
  'filter greater than / Total results': 'Unquoted date-time (`gt 2015-10-10T…`): 400 invalidFilter per RFC 7644 section 3.4.2.2.',
  'Group patch add member / Status code is 204':
    'Adds a member whose value is "string id 1", not the id of any User; RFC 7643 section 4.2 has `members.value` be a resource id, so the server refuses with 400 invalidValue and changes nothing.',
  'Group patch add member2 / Status code is 204': 'As above: "string id 2" names no User (RFC 7643 section 4.2), 400 invalidValue.',
};

interface Fresh {
  server: RunningServer;
  base: string;
  key: string;
  cert: string;
  dir: string;
}

async function freshServer(): Promise<Fresh> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-scim-conformance-'));
  const key = generateApiKey();
  const env: NodeJS.ProcessEnv = { DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ADMIN_API_KEY: key, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0' };
  const server = await startServer(loadConfig(env), () => undefined);
  const port = new URL(server.url).port;
  return { server, base: `https://127.0.0.1:${port}/api/scim/v2`, key, cert: path.join(dir, 'tls', 'localhost.crt'), dir };
}

async function stop(fresh: Fresh): Promise<void> {
  await fresh.server.close();
  fs.rmSync(fresh.dir, { recursive: true, force: true });
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

async function okta(): Promise<{ passed: number; failed: number; output: string }> {
  const fresh = await freshServer();
  try {
    // Its first step reads Resources[0] and expects a user with these attributes.
    const seeded = await fetchWithCa(fresh, 'POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'seed.user@example.com',
      name: { givenName: 'Seed', familyName: 'User' },
      emails: [{ value: 'seed.user@example.com', type: 'work', primary: true }],
      active: true,
    });
    if (seeded !== 201) throw new Error(`seeding the Okta user answered ${seeded}`);
    const result = await run(
      process.execPath,
      [path.join(material, 'run-okta-spec-test.mjs'), path.join(material, 'okta-scim20-spec-test.json'), fresh.base, `Bearer ${fresh.key}`],
      {
        NODE_EXTRA_CA_CERTS: fresh.cert,
      },
    );
    const summary = /(\d+) passed, (\d+) failed/.exec(result.output);
    return { passed: Number(summary?.[1] ?? 0), failed: summary ? Number(summary[2]) : 1, output: result.output };
  } finally {
    await stop(fresh);
  }
}

/** A request from this process, trusting only the fresh server's own certificate. */
async function fetchWithCa(fresh: Fresh, method: string, pathName: string, body: unknown): Promise<number> {
  const { request } = await import('node:https');
  const url = new URL(`${fresh.base}${pathName}`);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, ca: fs.readFileSync(fresh.cert), headers: { authorization: `Bearer ${fresh.key}`, 'content-type': 'application/scim+json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

interface NewmanFailure {
  name: string;
  reason: string;
}

async function microsoft(): Promise<{ passed: number; failed: number; failures: NewmanFailure[] }> {
  const fresh = await freshServer();
  const report = path.join(fresh.dir, 'newman.json');
  try {
    const port = new URL(fresh.base).port;
    const folders = [
      'Endpoint tests',
      'User tests',
      'Group tests',
      'ComplexAttribute tests',
      'User tests with garbage',
      'Group tests with garbage',
      'Teardown garbage',
    ];
    const newman = path.join(repoRoot, 'node_modules', '.bin', 'newman');
    const args = [
      'run',
      path.join(material, 'microsoft-scim-reference.postman.json'),
      '--env-var',
      'Protocol=https',
      '--env-var',
      'Server=127.0.0.1',
      '--env-var',
      `Port=:${port}`,
      '--env-var',
      'Api=api/scim/v2',
      '--env-var',
      `token=${fresh.key}`,
      '--ssl-extra-ca-certs',
      fresh.cert,
      ...folders.flatMap((f) => ['--folder', f]),
      '--reporters',
      'json',
      '--reporter-json-export',
      report,
    ];
    await run(newman, args, {});
    const json = JSON.parse(fs.readFileSync(report, 'utf8')) as {
      run: {
        stats: { assertions: { total: number; failed: number } };
        failures: Array<{ source?: { name?: string }; error: { test?: string; message: string } }>;
      };
    };
    const { total, failed } = json.run.stats.assertions;
    const failures = json.run.failures.map((f) => ({ name: `${f.source?.name ?? '?'} / ${f.error.test ?? '?'}`, reason: f.error.message }));
    return { passed: total - failed, failed, failures };
  } finally {
    await stop(fresh);
  }
}

const missing = MATERIAL_FILES.filter((file) => !fs.existsSync(path.join(material, file)));
if (missing.length > 0) {
  process.stderr.write(
    `The SCIM conformance material is not in ${material} (missing: ${missing.join(', ')}). Set SCIM_CONFORMANCE_DIR to the directory holding it; docs/maintainers/conformance.md lists the files.\n`,
  );
  process.exit(2);
}

const oktaResult = await okta();
process.stdout.write(
  oktaResult.output
    .split('\n')
    .filter((l) => l.startsWith('FAIL') || l.startsWith('     '))
    .map((l) => `${l}\n`)
    .join(''),
);
process.stdout.write(`Okta SCIM 2.0 SPEC test: ${oktaResult.passed} passed, ${oktaResult.failed} failed\n`);

const ms = await microsoft();
const unexplained = ms.failures.filter((f) => !(f.name in KNOWN_DIFFERENCES));
for (const f of ms.failures) {
  const why = KNOWN_DIFFERENCES[f.name];
  process.stdout.write(`${why ? 'expected' : 'UNEXPECTED'}  ${f.name}: ${f.reason}${why ? `\n            ${why}` : ''}\n`);
}
process.stdout.write(
  `Microsoft SCIM reference collection: ${ms.passed} passed, ${ms.failed} failed (${ms.failed - unexplained.length} justified, ${unexplained.length} unexplained)\n`,
);
process.exit(oktaResult.failed === 0 && unexplained.length === 0 ? 0 : 1);
