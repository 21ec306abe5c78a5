# attack: a Python program writes a forged frame (a message that is not an object) on the helper's channel descriptor 3
# expect: protocol
# hosts: confined
# known-limit[thread]: descriptor 3 belongs to the host's own process, which a worker thread shares
# timeout: 15000
import asyncio, js
js.process.getBuiltinModule("fs").writeSync(3, '{"type":"message","message":42}\n')
await asyncio.get_running_loop().create_future()
