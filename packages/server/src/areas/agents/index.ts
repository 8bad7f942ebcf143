/**
 * The agents area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export type { AgentsService, NewMessage, StoredThread, ThreadOwner } from './agents.service.js';
export type { AgentTaskRunInput, AgentTaskRunResult, AgentTaskRunner } from './task-scheduler.js';
export { NO_MODEL_PROVIDER } from './task-scheduler.js';
export type { TasksService } from './tasks.service.js';
export { agentsArea } from './agents.module.js';
