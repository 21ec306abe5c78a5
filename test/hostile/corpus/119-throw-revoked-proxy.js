// attack: throws a revoked proxy, which throws on every operation including typeof checks through traps
// expect: exception
const { proxy, revoke } = Proxy.revocable(new Error('inside'), {})
revoke()
throw proxy
