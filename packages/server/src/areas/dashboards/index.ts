/**
 * The dashboards area's public entry: what other areas may use of it. Everything else in the folder
 * is the area's own (npm run cycles enforces it).
 */
export { DashboardFilterInput, DashboardMemberSwitcherInput, DashboardTimeGrainInput } from './controls.schemas.js';
export { copyDashboards, copyDashboardsInto, copySharedPublication, sourceReportsOf, type CopiedReport, type SourceReport } from './copy.js';
export { PublicIdParams } from './dashboards.schemas.js';
export { findDashboardById, findDashboardByPublicId } from './dashboards.store.js';
export { findByWorkbook, findInDeployment, findPublishedByPublicId, findPublishedInDeployment, setAllowEmbed } from './published.js';
export { dashboardsArea } from './dashboards.module.js';
export { findWidget } from './dashboards.service.js';
