process.exit(1)
