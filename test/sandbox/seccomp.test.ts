/**
 * The generated seccomp filter, run by a small classic-BPF interpreter on the inputs the kernel
 * would give it: this covers the architecture this machine does not run (the behaviour on this
 * one is exercised for real in reach.test.ts) and the ABIs no test program here can reach.
 */
import { describe, expect, it } from 'vitest'
import { seccompFilter } from '../../src/host/sandbox/seccomp.js'

const ALLOW = 0x7fff0000
const KILL_PROCESS = 0x80000000
const errno = (code: number) => 0x00050000 | code
const EPERM = 1
const ENOSYS = 38

interface SeccompData {
  nr: number
  arch: number
  args?: number[]
}

/** Runs `filter` (struct sock_filter[]) on `data` as the kernel does; returns its verdict. */
function evaluate(filter: Buffer, { nr, arch, args = [] }: SeccompData): number {
  const data = Buffer.alloc(64)
  data.writeUInt32LE(nr >>> 0, 0)
  data.writeUInt32LE(arch >>> 0, 4)
  // Each argument is 64 bits, low word first; a number past 32 bits fills the high word.
  args.forEach((value, index) => {
    data.writeUInt32LE(value % 2 ** 32, 16 + 8 * index)
    data.writeUInt32LE(Math.floor(value / 2 ** 32), 20 + 8 * index)
  })
  let accumulator = 0
  for (let pc = 0; pc < filter.length / 8; pc++) {
    const code = filter.readUInt16LE(pc * 8)
    const jt = filter.readUInt8(pc * 8 + 2)
    const jf = filter.readUInt8(pc * 8 + 3)
    const k = filter.readUInt32LE(pc * 8 + 4)
    switch (code) {
      case 0x20: accumulator = data.readUInt32LE(k); break // ld [k]
      case 0x54: accumulator = (accumulator & k) >>> 0; break // and #k
      case 0x15: pc += accumulator === k ? jt : jf; break // jeq #k
      case 0x45: pc += (accumulator & k) !== 0 ? jt : jf; break // jset #k
      case 0x06: return k // ret #k
      default: throw new Error(`unexpected opcode 0x${code.toString(16)} at ${pc}`)
    }
  }
  throw new Error('the filter fell off its end')
}

const SOCK_CLOEXEC = 0o2000000
const SOCK_NONBLOCK = 0o4000
const ABIS = {
  x64: { arch: 0xc000003e, socket: 41, socketpair: 53, prlimit64: 302, read: 0 },
  arm64: { arch: 0xc00000b7, socket: 198, socketpair: 199, prlimit64: 261, read: 63 },
} as const

describe.each(Object.entries(ABIS))('the seccomp filter on %s', (name, abi) => {
  const filter = seccompFilter(name)
  const run = (nr: number, args: number[] = []) => evaluate(filter, { nr, arch: abi.arch, args })

  it('refuses socket(AF_UNIX) with EPERM, whatever the flags', () => {
    expect(run(abi.socket, [1, 1])).toBe(errno(EPERM))
    expect(run(abi.socket, [1, 2 | SOCK_CLOEXEC])).toBe(errno(EPERM))
  })

  it('allows sockets of other families (the network namespace decides about those)', () => {
    expect(run(abi.socket, [2, 1])).toBe(ALLOW) // AF_INET
    expect(run(abi.socket, [10, 2])).toBe(ALLOW) // AF_INET6
    expect(run(abi.socket, [16, 3])).toBe(ALLOW) // AF_NETLINK
  })

  it('allows stream and seqpacket socket pairs, with flags, and refuses datagram and raw ones', () => {
    expect(run(abi.socketpair, [1, 1 | SOCK_CLOEXEC | SOCK_NONBLOCK])).toBe(ALLOW)
    expect(run(abi.socketpair, [1, 5])).toBe(ALLOW)
    expect(run(abi.socketpair, [1, 2])).toBe(errno(EPERM))
    expect(run(abi.socketpair, [1, 3 | SOCK_CLOEXEC])).toBe(errno(EPERM))
  })

  it("refuses prlimit64 setting another process's limits, and allows reading them or setting the caller's own", () => {
    const RLIMIT_STACK = 3
    const address = 0x7ffd_1234_5678 // a stack address: both words set
    expect(run(abi.prlimit64, [1, RLIMIT_STACK, address, 0])).toBe(errno(EPERM))
    expect(run(abi.prlimit64, [1, RLIMIT_STACK, 0x1000, 0])).toBe(errno(EPERM)) // low word only
    expect(run(abi.prlimit64, [1, RLIMIT_STACK, 2 ** 40, 0])).toBe(errno(EPERM)) // high word only
    expect(run(abi.prlimit64, [1, RLIMIT_STACK, 0, address])).toBe(ALLOW)
    expect(run(abi.prlimit64, [0, RLIMIT_STACK, address, 0])).toBe(ALLOW)
  })

  it('refuses io_uring_setup with ENOSYS and allows ordinary syscalls', () => {
    expect(run(425)).toBe(errno(ENOSYS))
    expect(run(abi.read)).toBe(ALLOW)
  })

  it('kills a process that uses another architecture\'s syscalls', () => {
    expect(evaluate(filter, { nr: 359, arch: 0x40000003, args: [1, 1] })).toBe(KILL_PROCESS) // i386 socket
    expect(evaluate(filter, { nr: 281, arch: 0x40000028, args: [1, 1] })).toBe(KILL_PROCESS) // 32-bit arm socket
  })
})

describe('the seccomp filter, beyond the native ABIs', () => {
  it('kills a process that makes x32 syscalls on x86_64', () => {
    expect(evaluate(seccompFilter('x64'), { nr: 0x40000000 | 41, arch: 0xc000003e, args: [1, 1] })).toBe(KILL_PROCESS)
  })

  it('does not exist for an architecture it does not know, and says which', () => {
    expect(() => seccompFilter('riscv64')).toThrow(/no seccomp filter blocking unix sockets for riscv64/)
  })
})
