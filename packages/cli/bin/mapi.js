#!/usr/bin/env node
// The compiled CLI; `npm ci` (the root prepare script) and `npm run build` produce dist/.
import '../dist/main.js';
