-- Compare-and-PEXPIRE: the watchdog's renewal (Redisson renewExpiration, on a
-- string key). KEYS[1] lock key; ARGV[1] the caller's token; ARGV[2] TTL in ms.
-- Returns 1 if the key held the token and its TTL was reset, else 0.
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
