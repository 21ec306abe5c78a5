/**
 * An in-process fake of the part of a Kubernetes API server with the agent-sandbox controller
 * that docs/providers.md's provider uses: SandboxClaims of `extensions.agents.x-k8s.io/v1alpha1`
 * created, read and deleted over HTTP with a bearer token, answered with `Status` objects on
 * failure as Kubernetes does, and a ResourceQuota on their count. A claim becomes Ready once its
 * "pod" runs: a real stream entry started with `--listen` on a loopback address of its own.
 */
import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http'
import { type AddressInfo, createServer as createTcpServer } from 'node:net'
import { killSandbox, spawnEntry } from '../helpers/stream.js'

const GROUP = 'extensions.agents.x-k8s.io'
const VERSION = `${GROUP}/v1alpha1`
const COLLECTION = /^\/apis\/extensions\.agents\.x-k8s\.io\/v1alpha1\/namespaces\/([^/]+)\/sandboxclaims(?:\/([^/]+))?$/

interface FakeClaim {
  name: string
  template: string
  ip?: string
  ready?: { status: 'True' | 'False'; reason: string; message: string }
  pod?: ChildProcess
}

export class FakeAgentSandbox {
  readonly token = `token-${randomUUID()}`
  readonly namespace = 'sandboxes'
  readonly template = 'ptc-entry'
  /** Claims that exist now, by name. */
  readonly claims = new Map<string, FakeClaim>()
  /** Every claim ever created. */
  readonly created: string[] = []
  /** Every pod ever started. */
  readonly pods: ChildProcess[] = []
  /** At most this many claims at once (a ResourceQuota); beyond it a create is forbidden. */
  quota = Number.POSITIVE_INFINITY
  url = ''
  /** The port every pod's entry listens on (each pod has an address of its own). */
  port = 0
  private _server: Server | undefined
  private _nextHost = 2

  async start(): Promise<void> {
    this.port = await freePort()
    this._server = createServer((request, response) => void this._serve(request, response))
    await new Promise<void>((resolve) => this._server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this._server!.address() as AddressInfo).port}`
  }

  /** What `kubectl delete sandboxclaim` does while a run is in progress: the pod goes with it. */
  deleteClaim(name: string): void {
    const claim = this.claims.get(name)
    if (claim?.pod) killSandbox(claim.pod)
    this.claims.delete(name)
  }

  async close(): Promise<void> {
    for (const name of [...this.claims.keys()]) this.deleteClaim(name)
    await new Promise((resolve) => this._server?.close(resolve))
  }

  private async _serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const reply = (code: number, body: unknown) => {
      response.writeHead(code, { 'content-type': 'application/json' })
      response.end(JSON.stringify(body))
    }
    const status = (code: number, reason: string, message: string) => reply(code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code })
    if (request.headers.authorization !== `Bearer ${this.token}`) return status(401, 'Unauthorized', 'Unauthorized')
    const route = COLLECTION.exec(new URL(request.url!, this.url).pathname)
    if (!route || route[1] !== this.namespace) return status(404, 'NotFound', 'the server could not find the requested resource')
    const name = route[2]
    const notFound = () => status(404, 'NotFound', `sandboxclaims.${GROUP} "${name}" not found`)
    if (request.method === 'POST' && name === undefined) {
      const body = JSON.parse(await text(request)) as { apiVersion?: string; kind?: string; metadata?: { name?: string }; spec?: { sandboxTemplateRef?: { name?: string } } }
      const claimName = body.metadata?.name
      const template = body.spec?.sandboxTemplateRef?.name
      if (body.apiVersion !== VERSION || body.kind !== 'SandboxClaim' || !claimName || !template) return status(422, 'Invalid', 'SandboxClaim is invalid')
      if (this.claims.has(claimName)) return status(409, 'AlreadyExists', `sandboxclaims.${GROUP} "${claimName}" already exists`)
      if (this.claims.size >= this.quota) {
        const used = `count/sandboxclaims.${GROUP}`
        return status(403, 'Forbidden', `sandboxclaims.${GROUP} "${claimName}" is forbidden: exceeded quota: sandboxes, requested: ${used}=1, used: ${used}=${this.claims.size}, limited: ${used}=${this.quota}`)
      }
      const claim: FakeClaim = { name: claimName, template }
      this.claims.set(claimName, claim)
      this.created.push(claimName)
      setTimeout(() => this._schedule(claim), 20)
      return reply(201, this._object(claim))
    }
    const claim = name === undefined ? undefined : this.claims.get(name)
    if (request.method === 'GET' && name !== undefined) return claim ? reply(200, this._object(claim)) : notFound()
    if (request.method === 'DELETE' && name !== undefined) {
      if (!claim) return notFound()
      this.deleteClaim(name)
      return reply(200, { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name, group: GROUP, kind: 'sandboxclaims' } })
    }
    return status(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`)
  }

  /** The controller's part: a claim of a known template gets a pod, then is Ready. */
  private _schedule(claim: FakeClaim): void {
    if (this.claims.get(claim.name) !== claim) return // deleted meanwhile
    if (claim.template !== this.template) {
      claim.ready = { status: 'False', reason: 'TemplateNotFound', message: `SandboxTemplate "${claim.template}" not found` }
      return
    }
    claim.ip = `127.0.0.${this._nextHost++}`
    claim.pod = spawnEntry({ detached: true, args: ['--listen', `${claim.ip}:${this.port}`] })
    this.pods.push(claim.pod)
    claim.ready = { status: 'True', reason: 'SandboxReady', message: 'the sandbox pod is ready' }
  }

  private _object(claim: FakeClaim): unknown {
    return {
      apiVersion: VERSION,
      kind: 'SandboxClaim',
      metadata: { name: claim.name, namespace: this.namespace },
      spec: { sandboxTemplateRef: { name: claim.template } },
      status: {
        ...(claim.ready ? { conditions: [{ type: 'Ready', ...claim.ready }] } : {}),
        ...(claim.ip ? { sandbox: { name: claim.name, podIPs: [claim.ip] } } : {}),
      },
    }
  }
}

function text(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = ''
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
    request.on('end', () => resolve(body))
    request.on('error', reject)
  })
}

/** A port free on every loopback address now (the pods' entries listen on it). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createTcpServer().listen(0, '0.0.0.0', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}
