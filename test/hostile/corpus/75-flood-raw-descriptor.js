// attack: writes straight to file descriptor 1, bypassing the patched streams
// expect: output-limit
// timeout: 15000
// known-limit[thread]: descriptor 1 is the host's own stdout, which a worker thread shares
const fs = await import('node:fs')
// The descriptor is a non-blocking pipe: a full pipe throws EAGAIN, so keep trying.
for (;;) try { fs.writeSync(1, 'raw descriptor flood\n') } catch {}
