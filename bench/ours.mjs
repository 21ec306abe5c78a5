/**
 * ptc-runtime as a user sees it: the built package, plugged into a real Cordis context, one
 * `run(resolve(request))` per measurement.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Context } from 'cordis'

// bench/run.mjs points PTC_BENCH_DIST at its snapshot of dist/; a table run alone uses the package.
// The Cordis service lives in its own entry, beside the snapshot's index.js.
const { WorkerPtcRuntime } = await import(process.env.PTC_BENCH_DIST ? new URL('cordis.js', pathToFileURL(process.env.PTC_BENCH_DIST)).href : 'ptc-runtime/cordis')

/**
 * Plugs a WorkerPtcRuntime with `config` into a fresh root context. `config.isolation` is
 * required, so no table silently measures whichever tier is the default.
 */
export async function startOurs(config) {
  if (config.isolation === undefined) throw new Error('bench: say which tier to measure (config.isolation)')
  const root = new Context()
  await root.plugin(WorkerPtcRuntime, config)
  const runtime = root.ptcRuntime
  if (!runtime) throw new Error('the plugin loaded but ctx.ptcRuntime is not set')
  return {
    runtime,
    run: (request) => runtime.run(runtime.resolve(request)),
    dispose: () => root.fiber.dispose(),
  }
}

/** Runs a program through `ours` and throws unless it completed with `expected`. */
export async function runExpecting(ours, program, tools, expected) {
  const result = await ours.run({ program, bindings: [{ global: 'tools', functions: tools }] })
  if (result.error || result.value !== expected) {
    throw new Error(`ptc-runtime run failed: ${JSON.stringify(result.error ?? result.value)}`)
  }
  return result
}

/**
 * The confined helper-process host, when this build has it. It is first tried in a child
 * process (bench/sandbox-probe.mjs), so a host that crashes or hangs costs a skipped row, not
 * the table; only then is it started here.
 */
export async function startSandboxedIfWorking(config) {
  const probe = fileURLToPath(new URL('./sandbox-probe.mjs', import.meta.url))
  const outcome = await new Promise((resolve) => {
    execFile(process.execPath, [probe], { timeout: 60_000 }, (error, stdout, stderr) => {
      const line = stdout.trim().split('\n').at(-1)
      if (!error && line) return resolve(JSON.parse(line))
      const why = error?.killed ? 'timed out after 60 s' : (stderr.split('\n').find((text) => /Error/.test(text)) ?? error?.message ?? 'no output')
      resolve({ skipped: `the sandbox probe crashed: ${why.trim()}` })
    })
  })
  return outcome.skipped ? outcome : startSandboxed(config)
}

/**
 * The confined helper-process host, when this build has it. It counts as available only when a
 * `sandbox` config loads and a run completes reporting sandbox facts; anything else yields the
 * reason it was skipped, so the bench never passes off thread-host numbers as helper numbers.
 */
export async function startSandboxed(config) {
  const workspaceRoot = mkdtempSync(path.join(os.tmpdir(), 'ptc-bench-'))
  const cleanup = () => rmSync(workspaceRoot, { recursive: true, force: true })
  let ours
  try {
    ours = await startOurs({ ...config, isolation: 'process', sandbox: { mode: 'workspace-write', workspaceRoot }, cwd: workspaceRoot })
  } catch (error) {
    cleanup()
    return { skipped: `a sandbox config does not load: ${error.message.split('\n').slice(0, 2).join(' ')}` }
  }
  let reason
  try {
    const result = await ours.run({ program: 'return 1', bindings: [] })
    if (result.error?.kind === 'sandbox-unavailable') reason = `sandbox-unavailable: ${result.error.message}`
    else if (result.error) reason = `a sandboxed run failed (${result.error.kind}): ${result.error.message}`
    else if (result.sandbox === undefined) reason = 'the sandbox config loads but results carry no sandbox facts (helper-process host not wired in yet)'
  } catch (error) {
    reason = `a sandboxed run threw: ${error.message}`
  }
  if (reason) {
    await ours.dispose()
    cleanup()
    return { skipped: reason }
  }
  return { ours, dispose: () => ours.dispose().finally(cleanup) }
}
