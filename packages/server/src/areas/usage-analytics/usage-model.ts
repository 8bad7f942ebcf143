/**
 * The system usage deployment's project (reference 5.4): one cube over the tenant's audit events,
 * as `usage-data.ts` copies them into the deployment's SQLite data source. Committed as the
 * deployment's first commit, instead of the starter model.
 */
export const USAGE_MODEL_PATH = 'model/cubes/audit_events.yml';

export const USAGE_MODEL = `cubes:
  - name: audit_events
    title: Audit events
    sql_table: audit_events
    dimensions:
      - { name: id, sql: id, type: number, primary_key: true, public: true }
      - { name: occurred_at, sql: occurred_at, type: time, title: Occurred at }
      - { name: action, sql: action, type: string }
      - { name: actor_user_id, sql: actor_user_id, type: number, title: Actor user id }
      - { name: actor_email, sql: actor_email, type: string, title: Actor email }
      - { name: credential_kind, sql: credential_kind, type: string, title: Credential kind }
      - { name: method, sql: method, type: string }
      - { name: route, sql: route, type: string }
      - { name: status, sql: status, type: number }
    measures:
      - { name: count, type: count }
      - { name: actors, sql: actor_user_id, type: count_distinct }
`;

/** What the deployment is called (a number follows when the account already has one of that name). */
export const USAGE_DEPLOYMENT_NAME = 'Usage analytics';
