import { defineArea } from '../../platform/index.js';
import { DEFAULT_PYTHON_OPTIONS, PythonSandbox, type PythonSandboxOptions } from '../../python/sandbox.js';
import { dataApiArea } from '../data-api/index.js';
import { embedSessionsArea } from '../embed-sessions/index.js';
import { pythonRunsRoutes } from './python-runs.routes.js';
import { pythonRunSchemas } from './python-runs.schemas.js';
import { pythonRunsService } from './python-runs.service.js';
import { PythonRunCache } from './run-cache.js';

/**
 * Python analysis of embedded dashboards, in a sandbox whose pool loads on the first run (most
 * processes never run Python). `cacheMs`: how long a run's result is reused.
 */
export const pythonAnalysisArea = defineArea(
  'python-analysis',
  ({ platform: { store, now }, use }, config: { python?: PythonSandboxOptions & { cacheMs: number } }) => {
    const python = new PythonSandbox(config.python ?? DEFAULT_PYTHON_OPTIONS);
    const pythonRuns = pythonRunsService(
      store.db,
      use(embedSessionsArea).embedDashboards,
      use(dataApiArea).dataApi,
      python,
      new PythonRunCache(config.python?.cacheMs ?? 60_000),
      now,
    );
    return {
      services: { python, pythonRuns },
      schemas: pythonRunSchemas,
      routes: () => [pythonRunsRoutes(pythonRuns)],
      // Busy runs end as the app starts closing, so their requests answer at once rather than after PYTHON_TIMEOUT_MS.
      preClose: () => python.close(),
      close: () => python.close(),
    };
  },
);
