import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { SECRET_HEADER } from '../semantic-layer/protocol.js';

const POD_SUFFIX = 'bcdfghjklmnpqrstvwxz2456789';

/** A new pod's name: the environment and five random characters, as Kubernetes names pods. */
export function podName(environmentId: string): string {
  const bytes = randomBytes(5);
  return `${environmentId}-${[...bytes].map((b) => POD_SUFFIX[b % POD_SUFFIX.length]).join('')}`;
}

/** What a pod's secret is sealed to: copied to another row or pod, it does not decrypt. */
export const runtimeSecretContext = (rowId: number, pod: string) => `runtime:${rowId}:${pod}`;

/** True when `url` answers 2xx within `timeoutMs` (a health check; any failure is false). */
export function probe(url: string, secret: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, { headers: { [SECRET_HEADER]: secret }, timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 500) < 300);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
  });
}
