/**
 * The process tier helper's entry when it starts from a V8 startup snapshot
 * (src/host/environments/process/helper-snapshot.ts): `node --build-snapshot` runs this file once
 * per host process, which loads the environment's modules and captures what they capture, and
 * the snapshot then holds that heap. Each helper restored from it starts the environment as
 * main.ts would, with its modules already loaded. No program runs before the snapshot is made.
 */
// First, as in main.ts: a snapshot is made under the helper's start flags (start-flags.ts).
import './start-flags.js'
import { startupSnapshot } from 'node:v8'
import { startEnvironment } from './environment.js'

startupSnapshot.setDeserializeMainFunction(startEnvironment)
