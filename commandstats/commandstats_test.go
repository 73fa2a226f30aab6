package commandstats

import "testing"

func TestParseCommandStats(t *testing.T) {
	info := "# Server\r\nredis_version:7.0.15\r\nrun_id:abc\r\n# Replication\r\nrole:master\r\n# Commandstats\r\n" +
		"cmdstat_set:calls=10,usec=40,usec_per_call=4.00,rejected_calls=2,failed_calls=1\r\n" +
		"cmdstat_evalsha:calls=5,usec=40,usec_per_call=8.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_info:calls=7,usec=40,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_client|setinfo:calls=3,usec=4,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_hello:calls=3,usec=4,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n"
	got, err := Parse(info)
	if err != nil {
		t.Fatal(err)
	}
	if got != (NodeCalls{RunID: "abc", Role: "master", Calls: 17}) {
		t.Errorf("Parse = %+v, want run_id abc, role master, 17 calls (set 10+2 rejected, evalsha 5; info, client, hello left out)", got)
	}
	m := func(id, role string, n int64) NodeCalls { return NodeCalls{RunID: id, Role: role, Calls: n} }
	tests := []struct {
		name          string
		before, after []NodeCalls
		want          int64
		ok            bool
	}{
		{"two primaries", []NodeCalls{m("a", "master", 10), m("b", "master", 0)}, []NodeCalls{m("a", "master", 110), m("b", "master", 50)}, 150, true},
		{"a replica repeats its primary's commands", []NodeCalls{m("a", "master", 0), m("b", "slave", 0)}, []NodeCalls{m("a", "master", 40), m("b", "slave", 40)}, 40, true},
		{"restarted node", []NodeCalls{m("a", "master", 10)}, []NodeCalls{m("a2", "master", 3)}, 0, false},
		{"promoted replica", []NodeCalls{m("a", "master", 0), m("b", "slave", 0)}, []NodeCalls{m("a", "master", 10), m("b", "master", 30)}, 0, false},
		{"node missing", []NodeCalls{m("a", "master", 0)}, nil, 0, false},
	}
	for _, tt := range tests {
		n, ok := CommandsBetween(tt.before, tt.after)
		if n != tt.want || ok != tt.ok {
			t.Errorf("%s: CommandsBetween = %d, %v; want %d, %v", tt.name, n, ok, tt.want, tt.ok)
		}
	}
}
