/**
 * The environment's entry in a worker thread, and in a process tier's helper that does not start
 * from the startup snapshot (snapshot.ts): load the environment, then start it with the link its
 * thread has to its host.
 */
// First: it sets V8's start flags back before Node's modules load (start-flags.ts says why).
import './start-flags.js'
import { isMainThread } from 'node:worker_threads'
import { startEnvironment } from './environment.js'
import { helperProcessLink } from './helper-process.js'
import { workerThreadLink } from './thread-link.js'

startEnvironment(isMainThread ? helperProcessLink : workerThreadLink)
