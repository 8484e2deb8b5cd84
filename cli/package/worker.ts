// The executable's worker file: piscina's own worker host and the partition owners' task in ONE bundle, so both see
// the same piscina module (Piscina.move marks a reply with a module-private symbol that the host must recognise).
// piscina starts the thread on this file, then requires it again as the task file and calls its default export.

import runTask from '../../server/ingest/worker/worker.js';
// Resolved by build.ts to piscina's dist/worker.js (it starts listening for the pool's messages).
import 'audience-piscina-worker-host';

export default runTask;
