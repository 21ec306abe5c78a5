/**
 * The environment's entry in a worker thread, and in a process tier's helper that does not start
 * from the startup snapshot (snapshot.ts): load the environment, then start it.
 */
// First: it sets V8's start flags back before Node's modules load (start-flags.ts says why).
import './start-flags.js'
import { startEnvironment } from './environment.js'

startEnvironment()
