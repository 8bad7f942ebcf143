import { securitySuite } from './security-suite.js';

/* The shared security suite (security-suite.ts) with API keys as the credentials. */
securitySuite('API keys');
