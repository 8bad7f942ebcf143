export type { Platform } from './platform.js';
export {
  configure,
  defineArea,
  wire,
  type Area,
  type AreaContext,
  type AreaModule,
  type Configured,
  type Listed,
  type RouteContext,
  type Use,
} from './area-module.js';
export { Areas, type AreaServices } from './areas.js';
