-- Acquire with a fencing token, atomically. KEYS[1] lock key; KEYS[2] the
-- key's fencing counter; ARGV[1] the caller's token; ARGV[2] TTL in ms.
-- Returns the fencing token (>= 1) if the lock was set, else 0.
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('incr', KEYS[2])
end
return 0
