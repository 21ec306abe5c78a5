/**
 * The seccomp filter every confined helper runs under: a classic-BPF program, handed to
 * bubblewrap (`--seccomp FD`), that refuses to create unix sockets and to set another
 * process's resource limits. Connecting to a host
 * service's socket needs no write access (a tmux server, a D-Bus or Docker socket, an ssh
 * agent), so hiding the usual places is not enough: the kernel refuses the socket itself.
 *
 * - `socket(AF_UNIX, …)` fails with EPERM; every other family is allowed (the network is a
 *   separate choice, made by the network namespace).
 * - `socketpair` stays allowed for stream and seqpacket sockets: Node's own subprocess pipes
 *   are such pairs, and a connected pair cannot be pointed anywhere else. Datagram pairs (and
 *   `SOCK_RAW`, which unix sockets treat as datagram) fail with EPERM: `sendto` on one can
 *   address any socket path.
 * - `prlimit64` that sets a limit of another process fails with EPERM (reading one, or setting
 *   the caller's own with pid 0, as `ulimit` and `setrlimit` do, stays allowed): a program's
 *   subprocess could otherwise lower its helper's stack limit, and a helper's main thread, which
 *   runs the program, grows its stack under that limit, so a deep recursion would crash the
 *   helper instead of throwing a RangeError.
 * - `io_uring_setup` fails with ENOSYS (libuv then falls back to its thread pool): io_uring
 *   can create sockets without a `socket` call the filter would see.
 * - Any other syscall ABI (32-bit, x32) kills the process: its syscall numbers differ, so the
 *   rules above would not apply to it.
 */
import os from 'node:os'

// Classic BPF opcodes (linux/filter.h) and seccomp constants (linux/seccomp.h, linux/audit.h).
const LD_W_ABS = 0x20
const JEQ_K = 0x15
const JSET_K = 0x45
const AND_K = 0x54
const RET_K = 0x06
const RET_ALLOW = 0x7fff0000
const RET_KILL_PROCESS = 0x80000000
const RET_ERRNO = 0x00050000
const EPERM = 1
const ENOSYS = 38
const X32_SYSCALL_BIT = 0x40000000
const AF_UNIX = 1
const SOCK_STREAM = 1
const SOCK_SEQPACKET = 5
const SOCK_TYPE_MASK = 0xf

/** Offsets into `struct seccomp_data` (little-endian: an argument's low word comes first). */
const NR = 0
const ARCH = 4
const arg = (index: number) => 16 + 8 * index

interface Abi {
  audit: number
  socket: number
  socketpair: number
  prlimit64: number
  ioUringSetup: number
  /** x86_64 kernels also accept x32 syscalls (numbers with X32_SYSCALL_BIT) under the same arch. */
  x32: boolean
}

const ABIS: Partial<Record<NodeJS.Architecture, Abi>> = {
  x64: { audit: 0xc000003e, socket: 41, socketpair: 53, prlimit64: 302, ioUringSetup: 425, x32: true },
  arm64: { audit: 0xc00000b7, socket: 198, socketpair: 199, prlimit64: 261, ioUringSetup: 425, x32: false },
}

type Instruction = { code: number; k: number; jt?: string; jf?: string } | { label: string }

/** Encodes `program` as `struct sock_filter[]`, resolving jump labels to forward offsets. */
function assemble(program: Instruction[]): Buffer {
  const code = program.filter((entry): entry is Exclude<Instruction, { label: string }> => !('label' in entry))
  const labels = new Map<string, number>()
  let index = 0
  for (const entry of program) {
    if ('label' in entry) labels.set(entry.label, index)
    else index++
  }
  const buffer = Buffer.alloc(code.length * 8)
  code.forEach((instruction, at) => {
    const offset = (label: string | undefined) => {
      if (label === undefined) return 0
      const distance = labels.get(label)! - at - 1
      if (!(distance >= 0 && distance < 256)) throw new Error(`seccomp filter: jump to ${label} out of range`)
      return distance
    }
    buffer.writeUInt16LE(instruction.code, at * 8)
    buffer.writeUInt8(offset(instruction.jt), at * 8 + 2)
    buffer.writeUInt8(offset(instruction.jf), at * 8 + 3)
    buffer.writeUInt32LE(instruction.k >>> 0, at * 8 + 4)
  })
  return buffer
}

const compiled = new Map<string, Buffer>()

/**
 * The compiled filter for `arch` (default: this process's), assembled once per architecture:
 * every helper gets the same bytes. Throws, naming the architecture, where there is none:
 * confinement then reports `sandbox-unavailable` instead of running without it.
 */
export function seccompFilter(arch: string = process.arch): Buffer {
  let filter = compiled.get(arch)
  if (!filter) compiled.set(arch, (filter = assembleFilter(arch)))
  return filter
}

function assembleFilter(arch: string): Buffer {
  const abi = ABIS[arch as NodeJS.Architecture]
  if (!abi || os.endianness() !== 'LE') throw new Error(`there is no seccomp filter blocking unix sockets for ${arch} here`)
  const ld = (offset: number): Instruction => ({ code: LD_W_ABS, k: offset })
  const ret = (value: number): Instruction => ({ code: RET_K, k: value })
  return assemble([
    ld(ARCH),
    { code: JEQ_K, k: abi.audit, jf: 'kill' },
    ld(NR),
    ...(abi.x32 ? [{ code: JSET_K, k: X32_SYSCALL_BIT, jt: 'kill' }] : []),
    { code: JEQ_K, k: abi.socket, jt: 'socket' },
    { code: JEQ_K, k: abi.socketpair, jt: 'socketpair' },
    { code: JEQ_K, k: abi.prlimit64, jt: 'prlimit64' },
    { code: JEQ_K, k: abi.ioUringSetup, jt: 'enosys' },
    ret(RET_ALLOW),
    { label: 'prlimit64' },
    ld(arg(0)), // the pid: 0 is the caller (pid_t is 32 bits: the low word is all of it)
    { code: JEQ_K, k: 0, jt: 'allow' },
    ld(arg(2)), // the new limit's address, both words: NULL only reads
    { code: JEQ_K, k: 0, jf: 'eperm' },
    ld(arg(2) + 4),
    { code: JEQ_K, k: 0, jt: 'allow', jf: 'eperm' },
    { label: 'socket' },
    ld(arg(0)),
    { code: JEQ_K, k: AF_UNIX, jt: 'eperm' },
    ret(RET_ALLOW),
    { label: 'socketpair' },
    ld(arg(1)),
    { code: AND_K, k: SOCK_TYPE_MASK },
    { code: JEQ_K, k: SOCK_STREAM, jt: 'allow' },
    { code: JEQ_K, k: SOCK_SEQPACKET, jt: 'allow' },
    { label: 'eperm' },
    ret(RET_ERRNO | EPERM),
    { label: 'allow' },
    ret(RET_ALLOW),
    { label: 'enosys' },
    ret(RET_ERRNO | ENOSYS),
    { label: 'kill' },
    ret(RET_KILL_PROCESS),
  ])
}
