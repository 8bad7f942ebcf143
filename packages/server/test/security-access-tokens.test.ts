import { securitySuite } from './security-suite.js';

/* The shared security suite (security-suite.ts) with access tokens as the credentials. */
securitySuite('access tokens');
