# attack: a Python program keeps allocating 64 MB bytearrays, growing the interpreter's WebAssembly memory; on the confined host the kernel's data limit (Python's own MemoryError) and the budget's memory watch (worker-exit) hold the same budget, and which stops it first varies (Node 26: the watch)
# expect: exception|worker-exit
# message: ^MemoryError|memory budget of \d+ MiB \(maxMemoryMb\)
# expect[thread]: worker-exit
# message[thread]: memory budget of \d+ MiB \(maxMemoryMb\)|ran out of memory
# timeout: 20000
# alone[thread]: where a sample cannot see this memory (Node 20; WebAssembly on Node 26) the RSS backstop stops every running program of the process
chunks = []
while True:
    chunks.append(bytearray(64 * 2**20))
