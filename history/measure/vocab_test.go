package measure

import "github.com/lockbench/lockbench/history"

// A small vocabulary for synthetic histories (as the checker's contract
// tests have); times are in ms since run start (float), converted to ns.

func msNs(t float64) int64 { return int64(t * 1e6) }

// lockOp is a client's whole-lock operation.
func lockOp(kind history.Kind, client int, key, token string, res history.Result, inv, comp float64) history.Operation {
	return history.Operation{Client: client, Stream: client, Kind: kind, Key: key, Token: token, Result: res, Invoke: msNs(inv), Complete: msNs(comp)}
}

func acq(client int, key, token string, res history.Result, inv, comp float64) history.Operation {
	return lockOp(history.Acquire, client, key, token, res, inv, comp)
}

// held is an ok acquire with a hold id.
func held(client int, hold int64, key, token string, inv, comp float64) history.Operation {
	op := acq(client, key, token, history.OK, inv, comp)
	op.Hold = hold
	return op
}

func rel(client int, hold int64, key, token string, res history.Result, inv, comp float64) history.Operation {
	op := lockOp(history.Release, client, key, token, res, inv, comp)
	op.Hold = hold
	return op
}
