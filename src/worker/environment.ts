/**
 * The environment itself: runs inside every environment, in a worker thread or (the process
 * tier) as a helper process's main thread. It owns the globals the runtime provides (`console`,
 * `inspect`, `Image`, the binding namespaces) and evaluates one run at a time. Everything it
 * needs is captured as its modules load, before any program runs; `startEnvironment` links it to
 * its host. Its entries are main.ts (load, then start) and snapshot.ts (load into a V8 startup
 * snapshot, start in each process restored from it).
 */
import type { HostMessage } from '../protocol/messages.js'
import { createProgramState } from '../transform/hooks.js'
import { createConsole } from './console.js'
import { Image, createInspect } from './images.js'
import { captureAtomics, dataProperty, defineProperty, realmGlobal } from './intrinsics.js'
import { handPythonSnapshot, settlePythonSnapshot } from './python.js'
import { rehearse } from './rehearsal.js'
import { WorkerRun } from './run.js'
import { captureFetchClasses } from './web-fetch.js'
import { describeThrown, installStackFormatter } from './stack.js'
import { captureProcessStreams, resetProcessStreams } from './streams.js'
import type { EnvironmentLink } from './thread-link.js'
import { installProcessWorld, setWorkingDirectory } from './world.js'

/**
 * Links this environment to its host with `makeLink` and serves its runs; once per thread or
 * process. A worker thread (the thread tier's, or the one a stream tier's helper starts) hears
 * from its host through workerData; the process tier runs this bundle as the helper process
 * itself, whose main thread then holds the program's realm (helper-process.ts says why and what
 * replaces the worker's bounds). The entry chooses (main.ts, snapshot.ts).
 */
export function startEnvironment(makeLink: () => EnvironmentLink): void {
  captureAtomics()
  captureFetchClasses()
  // Made before anything below replaces `process.cwd`.
  const link = makeLink()
  const { outbox, sharesHostProcess, rehearsal } = link
  handPythonSnapshot(link.pythonSnapshot)
  const state = createProgramState()
  let current: WorkerRun | undefined

  // Output and spawns always go to the run in progress; between runs they are dropped.
  const sink = {
    text: (text: string) => current?.output.text(text),
    image: (id: string, bytes: number) => current?.output.image(id, bytes),
  }
  const programConsole = createConsole(captureProcessStreams(sink))
  const inspect = createInspect(sink)

  installStackFormatter()
  installProcessWorld((pid) => current?.spawned(pid), {
    sharesHostProcess,
    subprocessMarker: link.subprocessMarker,
  })

  // eslint-disable-next-line hostile-realm/captured-builtins -- as the environment starts, before any program
  process.on('unhandledRejection', (reason) => {
    current?.fail('exception', `Unhandled promise rejection: ${describeThrown(reason)}`)
  })
  // eslint-disable-next-line hostile-realm/captured-builtins -- as the environment starts, before any program
  process.on('uncaughtException', (error) => {
    current?.fail('exception', describeThrown(error))
  })

  function installRuntimeGlobals(): void {
    // Not a for-of: an earlier program of a retained environment may have replaced the array iterator.
    defineProperty(realmGlobal, 'console', dataProperty(programConsole, false, true, true))
    defineProperty(realmGlobal, 'inspect', dataProperty(inspect, false, true, true))
    defineProperty(realmGlobal, 'Image', dataProperty(Image, false, true, true))
  }

  function receive(message: HostMessage): void {
    if (message.type === 'warm') return
    if (message.type !== 'run') return current?.receive(message)
    settlePythonSnapshot(message.program.python !== undefined || message.initializer?.python !== undefined)
    resetProcessStreams()
    current = new WorkerRun(outbox, message, sharesHostProcess)
    setWorkingDirectory(message.cwd)
    installRuntimeGlobals()
    void current.execute(state)
  }

  const serve = () => link.serve(receive)

  // Host messages wait (in the port's queue, or unread on the descriptors) until the rehearsal is over.
  if (rehearsal) {
    // eslint-disable-next-line hostile-realm/captured-builtins -- as the environment starts, before any program
    void rehearse(rehearsal, link.framed, (run) => {
      current = run
      if (run) installRuntimeGlobals()
    }).then(serve, serve) // a failed rehearsal only loses the warm-up
  } else {
    serve()
  }
}
