import type { CreationStep } from '../../db/tables.js';

/**
 * The setup wizard's moves (reference 1.13), decided here since the reference leaves them open.
 * The steps are alternatives, not a line: a deployment starts at `project`, takes its model from
 * one place (`upload`, `git-host`, `ssh`, or the `demo` model), connects its data sources
 * (`databases`), shapes its model (`schema`), and is `ready` once production has built. Going
 * back to an earlier step is always allowed through `reset` (to `project`) or the moves below.
 *
 * | from      | may advance to                                       |
 * |-----------|------------------------------------------------------|
 * | project   | upload, git-host, ssh, demo, databases, schema        |
 * | upload    | project, databases, schema                            |
 * | git-host  | project, databases, schema                            |
 * | ssh       | project, databases, schema                            |
 * | demo      | project, ready                                        |
 * | databases | project, schema, ready                                |
 * | schema    | project, databases, ready                             |
 * | ready     | databases, schema                                     |
 *
 * Reaching `ready` also needs a successful production build. Advancing to the step the wizard is
 * at changes nothing.
 */
export const NEXT_STEPS: Record<CreationStep, readonly CreationStep[]> = {
  project: ['upload', 'git-host', 'ssh', 'demo', 'databases', 'schema'],
  upload: ['project', 'databases', 'schema'],
  'git-host': ['project', 'databases', 'schema'],
  ssh: ['project', 'databases', 'schema'],
  demo: ['project', 'ready'],
  databases: ['project', 'schema', 'ready'],
  schema: ['project', 'databases', 'ready'],
  ready: ['databases', 'schema'],
};

/** Why the wizard cannot move from `from` to `to`, or null when it can (`built`: production has built successfully). */
export function stepRefusal(from: CreationStep, to: CreationStep, built: boolean): string | null {
  if (from === to) return null;
  if (!NEXT_STEPS[from].includes(to))
    return `From the step ${from} the wizard goes on to ${NEXT_STEPS[from].join(', ')}, not ${to}; reset it to start again from project.`;
  if (to === 'ready' && !built)
    return 'The deployment is not ready: production has no successful build yet. Fix the data model (GET …/build-status says why) and advance again.';
  return null;
}
