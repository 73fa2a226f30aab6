-- Compare-and-delete (redis.io distlock page; bsm/redislock).
-- KEYS[1] lock key; ARGV[1] the caller's token.
-- Returns 1 if the key held the token and was deleted, 0 if it holds
-- another owner's token (taken), -1 if there is no key (expired): the GET
-- it needs anyway tells the two apart.
local v = redis.call('get', KEYS[1])
if v == ARGV[1] then
  return redis.call('del', KEYS[1])
end
if v then
  return 0
end
return -1
