-- Reentrant acquire (Redisson RedissonLock.tryLockInnerAsync, returning the
-- count instead of nil). KEYS[1] lock hash; ARGV[1] owner field; ARGV[2] TTL in ms.
-- Returns the owner's reentrancy count after this acquire (>= 1), or 0 if
-- another owner holds the lock.
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  local n = redis.call('hincrby', KEYS[1], ARGV[1], 1)
  redis.call('pexpire', KEYS[1], ARGV[2])
  return n
end
return 0
