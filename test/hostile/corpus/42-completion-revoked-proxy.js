// attack: the completion holds a revoked proxy
// expect: invalid-output
const { proxy, revoke } = Proxy.revocable({ a: 1 }, {})
revoke()
/* completion */ ({ nested: [proxy] })
