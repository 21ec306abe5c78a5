/**
 * Tiers: where environments live. A tier starts environments (`environment.ts`) from a
 * description of their policy; everything after that (run, kill, observe death, measure memory)
 * goes through the environment. The provider picks its tier once, from `config.isolation`
 * (`index.ts`), and never asks which one it has.
 */
import type { SandboxExecutionPolicy } from '../../seam/types.js'
import type { WorkerPtcRuntimeConfig } from '../config.js'
import type { Environment } from './environment.js'
import type { Sandbox } from '../sandbox/confinement.js'

/** What a tier is asked to start: one environment for the runs of one sandbox policy. */
export interface EnvironmentDescription {
  /** The policy its programs are confined to; absent for a deployment with `sandbox: 'none'`. */
  readonly policy: SandboxExecutionPolicy | undefined
}

/** What every tier is built from: the deployment's configuration and its sandbox, if any. */
export interface TierSetting {
  readonly config: WorkerPtcRuntimeConfig & { cwd: string }
  readonly sandbox: Sandbox | undefined
}

export interface Tier {
  /** The name the runtime reports as its `isolation`. */
  readonly name: string
  /** Whether it can confine a program to a sandbox policy (the default confinement applies then). */
  readonly confines: boolean
  /**
   * What one idle spare environment holds in memory, in MB: the pool grows under demand only
   * while its spares fit in `poolMemoryMb` (source.ts). Absent: the pool stays at `poolSize`.
   */
  readonly spareMb?: number
  /**
   * What every environment of this tier is held to by what it runs in, whatever the
   * configuration says (a container's): its runs report the policy as their sandbox facts, and
   * the model is told the instructions.
   */
  readonly confinement?: { readonly policy: SandboxExecutionPolicy; readonly instructions: string }
  /**
   * Where its programs run whatever a request says, in words (`the container's /tmp`), on a tier
   * whose environments cannot enter a host path: `resolve` refuses a request `cwd` naming it.
   */
  readonly fixedCwd?: string
  /** Once, before the first environment: finds and probes what the tier needs. */
  start(setting: TierSetting): Promise<void>
  /** A fresh environment; whether it could start, it says through its `ready`. */
  spawn(description: EnvironmentDescription): Environment
  /**
   * Optional: how many more environments it can start now (a sandbox provider's headroom); the
   * pool keeps no spare while it answers 0.
   */
  capacity?(): number
  /** Once every environment has ended, at the runtime's disposal: releases what `start` set up. */
  stop?(): void | Promise<void>
}
