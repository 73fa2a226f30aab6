-- Reentrant release (Redisson RedissonLock.unlockInnerAsync, without the
-- pub/sub notification). KEYS[1] lock hash; ARGV[1] owner field; ARGV[2] TTL in ms.
-- Returns the remaining count (0: the key was deleted), -1 if another
-- owner holds the lock (taken), or -2 if there is no key (expired).
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  if redis.call('exists', KEYS[1]) == 1 then
    return -1
  end
  return -2
end
local n = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if n > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return n
end
redis.call('del', KEYS[1])
return 0
