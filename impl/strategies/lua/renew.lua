-- Compare-and-PEXPIRE: the watchdog's renewal (Redisson renewExpiration, on a
-- string key). KEYS[1] lock key; ARGV[1] the caller's token; ARGV[2] TTL in ms.
-- Returns 1 if the key held the token and its TTL was reset, 0 if it holds
-- another owner's token (taken), -1 if there is no key (expired).
local v = redis.call('get', KEYS[1])
if v == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
if v then
  return 0
end
return -1
