import type { Caller } from '../../access/caller.js';
import type { Store } from '../../db/database.js';
import type { RuntimeEnvironmentType } from '../../db/tables.js';
import type { Runtime } from '../../runtime/index.js';
import { decodeCursor, encodeCursor, pageRequest, positionalPage, positionalWindow } from '../../shared/pagination.js';
import { ApiError } from '../../shared/problems.js';
import { authorizeDeployment } from './deployment-access.js';

/** The one container of a pod here; the reference's other containers (`INIT`, `vector`, ...) have no lines. */
export const MAIN_CONTAINER = 'MAIN';

export interface DeploymentPod {
  name: string;
  containers: string[];
  ready: boolean;
  restartCount: number;
  status: string;
  type: string;
}

export interface LogsQuery {
  source?: 'production' | 'dev';
  pod?: string;
  container?: string;
  first?: number;
  after?: string;
}

const SOURCES: Record<'production' | 'dev', RuntimeEnvironmentType[]> = { production: ['production'], dev: ['staging', 'dev'] };

/** Reference 1.9-1.10: the deployment's pods and their logs, read from the runtime service (DeploymentRead). */
export function podsService(store: Store, runtime: Runtime) {
  const { db } = store;
  return {
    /** Every environment's current pod, `Terminated` for one suspended while idle (a request wakes it). */
    async pods(caller: Caller, deploymentId: number, input: { first?: number; after?: string }) {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentRead');
      const rows = await runtime.pods(row.tenant_id, row.id);
      const pods: DeploymentPod[] = rows.map((r) => ({
        name: r.pod,
        containers: [MAIN_CONTAINER],
        ready: r.ready === 1,
        restartCount: r.restart_count,
        status: r.status,
        type: r.type,
      }));
      return positionalPage(pods, positionalWindow(input));
    },

    /**
     * Without `after`: the newest `first` lines (the tail), oldest first. With `after` (a page's
     * `endCursor`): the lines written since, so a client follows the log by passing each page's
     * `endCursor` back; an empty page keeps the cursor it was given.
     */
    async logs(caller: Caller, deploymentId: number, input: LogsQuery) {
      const { row } = await authorizeDeployment(db, caller, deploymentId, 'DeploymentRead');
      const page = pageRequest(input);
      let afterId: number | undefined;
      if (page.after !== undefined) {
        const [id] = decodeCursor(page.after, 1);
        if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0)
          throw new ApiError('INVALID_CURSOR', 'The `after` cursor was not issued by this list; pass `pageInfo.endCursor` of the previous page.');
        afterId = id;
      }
      if (input.container !== undefined && input.container !== MAIN_CONTAINER) {
        return { items: [], pageInfo: { startCursor: null, endCursor: page.after ?? encodeCursor([0]), hasNextPage: false, hasPreviousPage: false } };
      }
      const filter = {
        tenantId: row.tenant_id,
        deploymentId: row.id,
        ...(input.source ? { types: SOURCES[input.source] } : {}),
        ...(input.pod !== undefined ? { pod: input.pod } : {}),
      };
      const { rows, lastId, hasOlder, hasNewer } = await runtime.logs(filter, { ...(afterId === undefined ? {} : { afterId }), limit: page.first });
      const first = rows[0];
      return {
        items: rows.map((r) => ({ pod: r.pod, date: r.at, message: r.message })),
        pageInfo: {
          startCursor: first ? encodeCursor([first.id - 1]) : null,
          // Never null: a client follows from here even when nothing matched yet.
          endCursor: encodeCursor([lastId]),
          hasNextPage: hasNewer,
          hasPreviousPage: hasOlder,
        },
      };
    },
  };
}
export type PodsService = ReturnType<typeof podsService>;
