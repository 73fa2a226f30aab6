package impl

import (
	"strconv"
	"time"
)

// Defaults applied by WithDefaults.
const (
	defaultDriftFactor    = 0.01
	minNodeTimeout        = 5 * time.Millisecond
	defaultNodeTimeoutDiv = 10
	defaultRenewDiv       = 3
)

// WithDefaults returns c with zero fields replaced by their documented
// defaults (see Config).
func (c Config) WithDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if len(c.NodeNames) != len(c.Nodes) {
		names := make([]string, len(c.Nodes))
		for i := range names {
			if i < len(c.NodeNames) && c.NodeNames[i] != "" {
				names[i] = c.NodeNames[i]
			} else {
				names[i] = "n" + strconv.Itoa(i+1)
			}
		}
		c.NodeNames = names
	}
	if c.DriftFactor == 0 {
		c.DriftFactor = defaultDriftFactor
	}
	if c.NodeTimeout == 0 {
		c.NodeTimeout = max(c.TTL/defaultNodeTimeoutDiv, minNodeTimeout)
	}
	if c.RenewEvery == 0 {
		c.RenewEvery = c.TTL / defaultRenewDiv
	}
	if c.WaitTimeout == 0 {
		c.WaitTimeout = DefaultWaitTimeout(c.TTL)
	}
	return c
}

// Bounds of DefaultWaitTimeout.
const (
	minWaitTimeout = 5 * time.Millisecond
	maxWaitTimeout = 100 * time.Millisecond
	waitTimeoutDiv = 10
)

// DefaultWaitTimeout is Config.WaitTimeout's default for a lock of TTL
// ttl: ttl/10, at least 5 ms and at most 100 ms. A replica on the same
// host acknowledges within a millisecond or two; the bound keeps a grant
// that no replica confirms from costing more than a tenth of its lease.
func DefaultWaitTimeout(ttl time.Duration) time.Duration {
	return min(max(ttl/waitTimeoutDiv, minWaitTimeout), maxWaitTimeout)
}
