// attack: awaits a host function that never resolves
// expect: timeout
// timeout: 500
await tools.hang()
