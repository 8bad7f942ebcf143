import { spawn } from 'node:child_process';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gitEnvironment } from './run.js';

export interface SmartHttpRequest {
  method: string;
  /** `/<id>.git/info/refs`, `/<id>.git/git-upload-pack`, ... below the repositories' root. */
  pathInfo: string;
  query: string;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  /** The Git-Protocol header (protocol v2 negotiation). */
  gitProtocol: string | undefined;
  body: Readable | null;
  remoteUser: string;
  remoteAddr: string;
  /** Variables for the pre-receive hook (push-hook.ts). */
  hookEnv: Record<string, string>;
  /**
   * Runs once git has exited successfully and before the response ends: a git client takes its
   * push as done only at the end of the response, so what this records is there when it does.
   * If it fails, the response is cut off and the client reports an error.
   */
  beforeEnd?: () => Promise<void>;
}

export interface SmartHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: Readable;
  /** Settles when git has exited and `beforeEnd` has run, as the body ends; rejects when `beforeEnd` failed. */
  done: Promise<void>;
}

const HEADER_END = /\r?\n\r?\n/;

/**
 * Git's smart HTTP protocol, served by git's own CGI program (`git http-backend`): clone, fetch
 * and push speak to real git, not an imitation. The caller has already authenticated and
 * authorized the request; this only bridges CGI to HTTP.
 */
/**
 * The most pack data one push may send, after any Content-Encoding is undone (the route bounds the
 * body as sent; gzip could carry far more).
 */
export const MAX_PUSH_PACK_BYTES = 100 * 1024 * 1024;

/**
 * What receive-pack checks in every push, set for each `git http-backend` run so it holds for
 * repositories created before it too. fsckObjects (strict, as receive runs it) refuses malformed
 * objects and trees whose entries are `.`, `..`, `.git` (in any case or NTFS/HFS spelling) or
 * hold a `/`: no pushed path leaves the tree or writes into a repository's own directory.
 * maxInputSize ends a push whose pack is bigger. Passed as GIT_CONFIG_* variables: configuration
 * no repository file can override, and that no command line shows.
 */
const RECEIVE_CONFIG: Array<[string, string]> = [
  ['receive.fsckObjects', 'true'],
  ['receive.maxInputSize', String(MAX_PUSH_PACK_BYTES)],
];

function configEnvironment(config: Array<[string, string]>): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(config.length) };
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

export function serveSmartHttp(root: string, request: SmartHttpRequest): Promise<SmartHttpResponse> {
  const env = gitEnvironment({
    ...configEnvironment(RECEIVE_CONFIG),
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    REQUEST_METHOD: request.method,
    PATH_INFO: request.pathInfo,
    QUERY_STRING: request.query,
    REMOTE_USER: request.remoteUser,
    REMOTE_ADDR: request.remoteAddr,
    ...(request.contentType ? { CONTENT_TYPE: request.contentType } : {}),
    ...(request.contentEncoding ? { HTTP_CONTENT_ENCODING: request.contentEncoding } : {}),
    ...(request.gitProtocol ? { GIT_PROTOCOL: request.gitProtocol } : {}),
    ...request.hookEnv,
  });
  const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const stderr: Buffer[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  child.stdin.on('error', () => undefined);
  if (request.body) pipeline(request.body, child.stdin).catch(() => child.kill());
  else child.stdin.end();

  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    let answered = false;
    const body = new PassThrough();
    const done = exited.then(async (code) => {
      if (!answered) return;
      // git's own failure (a push cut off by its client, a refused pack) is git's to report.
      if (code !== 0) {
        body.destroy(new Error(`git http-backend exited ${code}: ${Buffer.concat(stderr).toString('utf8').trim()}`));
        return;
      }
      try {
        await request.beforeEnd?.();
      } catch (error) {
        body.destroy(error as Error);
        throw error;
      }
      body.end();
    });
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const text = head.toString('latin1');
      const end = HEADER_END.exec(text);
      if (!end) return;
      child.stdout.off('data', onData);
      answered = true;
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of text.slice(0, end.index).split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        const value = line.slice(colon + 1).trim();
        if (name === 'status') status = Number.parseInt(value, 10) || 500;
        else headers[name] = value;
      }
      body.write(head.subarray(Buffer.byteLength(text.slice(0, end.index + end[0].length), 'latin1')));
      // The body ends only after git has exited and `beforeEnd` has run (`done`).
      child.stdout.pipe(body, { end: false });
      resolve({ status, headers, body, done });
    };
    child.stdout.on('data', onData);
    child.on('error', reject);
    exited.then((code) => {
      // Exited before finishing its headers.
      if (!answered) {
        reject(new Error(`git http-backend exited ${code} without a response: ${Buffer.concat(stderr).toString('utf8').trim()}`));
      }
    }, reject);
  });
}
