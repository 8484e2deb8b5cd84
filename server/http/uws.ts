// uWebSockets.js, loaded after uws-limits.ts has set the environment it reads at load time. Every module of the
// process must import uWS through this file (ES modules evaluate imports in order, depth first).

import './uws-limits.js';

export * from 'uWebSockets.js';
