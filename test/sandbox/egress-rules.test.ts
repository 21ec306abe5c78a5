/**
 * The egress broker's rules, called directly with a resolver the test controls: what a name may
 * resolve to, how wildcards and ports match, and which addresses count as private. The end to
 * end path (a confined program, a real server) is in egress.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { egressNamespace, isPrivateAddress } from '../../src/host/egress.js'
import { PtcCallRefusal } from '../../src/seam/refusal.js'
import type { SandboxEgress } from '../../src/seam/types.js'

/** Fetches `url` through a broker for `egress` whose resolver answers `addresses` for every name. */
async function fetchThrough(egress: SandboxEgress, url: string, addresses: string[]): Promise<unknown> {
  const resolved: string[] = []
  const namespace = egressNamespace(egress, {
    lookup: async (host) => {
      resolved.push(host)
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
    },
  })
  const send = namespace.functions.send! as (args: unknown, call: { signal: AbortSignal }) => Promise<unknown>
  return send({ method: 'GET', url, headers: [] }, { signal: AbortSignal.timeout(5_000) })
}

describe('the egress broker refuses before connecting', () => {
  const allowed: SandboxEgress = { allow: ['*.example.com', 'api.github.com'] }

  it('refuses an allowed name whose DNS answer is loopback: no rebinding to the host', async () => {
    await expect(fetchThrough(allowed, 'https://api.example.com/', ['127.0.0.1'])).rejects.toThrow(
      'fetch to api.example.com refused: it resolves to 127.0.0.1, a private, loopback or link-local address, and allow entry *.example.com is not an IP literal')
  })

  it('refuses when any one of the answers is private, IPv4-mapped ones included', async () => {
    await expect(fetchThrough(allowed, 'https://api.github.com/', ['140.82.112.6', '::ffff:10.0.0.1'])).rejects.toThrow(/resolves to ::ffff:10\.0\.0\.1/)
    await expect(fetchThrough(allowed, 'https://api.github.com/', ['169.254.169.254'])).rejects.toThrow(/resolves to 169\.254\.169\.254/)
  })

  it('matches a wildcard against subdomains only, and only the default port unless the entry names one', async () => {
    const refusal = await fetchThrough(allowed, 'https://example.com/', ['93.184.216.34']).catch((error: unknown) => error)
    expect(PtcCallRefusal.is(refusal)).toBe(true)
    expect((refusal as Error).message).toBe('fetch to example.com refused: host example.com is not in the network allow list (*.example.com, api.github.com)')
    await expect(fetchThrough(allowed, 'https://api.github.com:8443/', ['140.82.112.6'])).rejects.toThrow(/host api\.github\.com:8443 is not in the network allow list/)
    await expect(fetchThrough(allowed, 'ftp://api.github.com/', ['140.82.112.6'])).rejects.toThrow(/scheme ftp: is not allowed \(http: and https: only\)/)
  })

  it('refuses an IP address no entry names, even a public one', async () => {
    await expect(fetchThrough({ allow: ['*.example.com:8080'] }, 'http://93.184.216.34:8080/', [])).rejects.toThrow(/host 93\.184\.216\.34:8080 is not in the network allow list/)
  })

  it('counts loopback, private, link-local, shared and unspecified addresses as private, and public ones not', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', '169.254.169.254', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) {
      expect(isPrivateAddress(address), address).toBe(true)
    }
    for (const address of ['140.82.112.6', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) expect(isPrivateAddress(address), address).toBe(false)
  })
})
