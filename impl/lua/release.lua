-- Compare-and-delete (redis.io distlock page; bsm/redislock).
-- KEYS[1] lock key; ARGV[1] the caller's token.
-- Returns 1 if the key held the token and was deleted, else 0.
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
